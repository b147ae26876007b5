/**
 * What a text costs, by the server's own rules, imported as they are so the console and the
 * server agree: the merge grammar (src/domain/merge-fields.ts, docs/API.md §14.3.1: `{{` and `}}`
 * are single braces when sent) and the segments (src/domain/segments.ts: GSM-7 or UCS-2, 160/153
 * or 70/67 per segment; docs/API.md §11.1).
 */
import { parseMerge, renderMerge } from '../../src/domain/merge-fields.ts';
import { smsSegments } from '../../src/domain/segments.ts';

/** Credits one SMS segment costs with the server's default settings (MSGSVC_SMS_SEGMENT_CREDITS). */
export const DEFAULT_SEGMENT_CREDITS = 1;

export interface TextCost {
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  credits: number;
  /** Characters as the encoding counts them: septets for GSM-7, UTF-16 units for UCS-2. */
  units: number;
  /**
   * True when the text holds merge fields: the figures are then those of a recipient who is no
   * contact (every field empty); each recipient's own values add to them (sms/preview tells).
   */
  personalised: boolean;
}

/**
 * The encoding, segments and credits of an SMS text as sent (at `segmentCredits` a segment): its
 * braces unescaped and its merge fields empty.
 */
export function textCost(text: string, segmentCredits = DEFAULT_SEGMENT_CREDITS): TextCost {
  const template = parseMerge(text);
  const sent = renderMerge(template, undefined);
  const { encoding, segments } = smsSegments(sent);
  const units = encoding === 'UCS-2' ? sent.length : [...sent].reduce((n, c) => n + ('^{}\\[~]|€\f'.includes(c) ? 2 : 1), 0);
  return { encoding, segments, credits: segments * segmentCredits, units, personalised: template.hasFields };
}

/** The most characters a `Message` may have as written (docs/API.md §10.6: 1 to 1,600). */
export const MESSAGE_MAX_CHARACTERS = 1600;

/**
 * The characters of a text as the API counts them against that limit: Unicode code points (an
 * emoji is one; a lone surrogate is one too), as src/domain/validation.ts's characterLength.
 */
export function characterCount(text: string): number {
  return [...text].length;
}
