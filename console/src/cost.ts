/**
 * What a text costs, by the server's own rule: src/domain/segments.ts (GSM-7 or UCS-2, 160/153 or
 * 70/67 per segment; docs/API.md §11.1) imported as it is, so the console and the server agree.
 */
import { smsSegments } from '../../src/domain/segments.ts';

/** Credits one SMS segment costs with the server's default settings (MSGSVC_SMS_SEGMENT_CREDITS). */
export const DEFAULT_SEGMENT_CREDITS = 1;

export interface TextCost {
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  credits: number;
  /** Characters as the encoding counts them: septets for GSM-7, UTF-16 units for UCS-2. */
  units: number;
}

/** The encoding, segments and credits of an SMS text (at `segmentCredits` a segment). */
export function textCost(text: string, segmentCredits = DEFAULT_SEGMENT_CREDITS): TextCost {
  const { encoding, segments } = smsSegments(text);
  const units = encoding === 'UCS-2' ? text.length : [...text].reduce((n, c) => n + ('^{}\\[~]|€\f'.includes(c) ? 2 : 1), 0);
  return { encoding, segments, credits: segments * segmentCredits, units };
}
