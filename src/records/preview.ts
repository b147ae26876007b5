import { type Static, Type } from '@sinclair/typebox';
import { Int, Str } from './common.ts';

/**
 * The reply of `sms/preview` (API.md §14.3.2): what `sms/send` would queue for the same body.
 * `Message` is the text as it would be sent (merge fields replaced, links shortened; for an MMS the
 * template's Message merged for the recipient), `Encoding` `GSM-7` or `UCS-2` (`""` for an MMS),
 * `Segments` and `Credits` its cost (API.md §11.1).
 */
export const SmsPreviewRecordSchema = Type.Object({
  Message: Str(),
  Encoding: Type.Unsafe<string>({ type: 'string', enum: ['GSM-7', 'UCS-2', ''] }),
  Segments: Int(),
  Credits: Int(),
});
export type SmsPreviewRecord = Static<typeof SmsPreviewRecordSchema>;

/** Maps the domain's preview to its record. */
export function smsPreviewRecord(p: { message: string; encoding: string; segments: number; credits: number }): SmsPreviewRecord {
  return { Message: p.message, Encoding: p.encoding, Segments: p.segments, Credits: p.credits };
}
