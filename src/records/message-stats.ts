import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import { Int, Str } from './common.ts';

/**
 * One bucket of `sms/stats` (docs/API.md §9.18, §10.9): the account's messages created in one
 * hour or one day of the service's time zone, counted by their status now.
 */
export interface StatsBucketRow {
  /** The bucket's first instant, epoch seconds. */
  start: number;
  outbound: number;
  inbound: number;
  delivered: number;
  undelivered: number;
  failed: number;
  rejected: number;
  /** Credits spent on the bucket's messages, less what was refunded (docs/API.md §11.1). */
  credits: number;
}

/** docs/API.md §9.18, fields in its order. */
export const StatsBucketRecordSchema = Type.Object({
  Time: Str(),
  Outbound: Int(),
  Inbound: Int(),
  Delivered: Int(),
  Undelivered: Int(),
  Failed: Int(),
  Rejected: Int(),
  Credits: Int(),
});
export type StatsBucketRecord = Static<typeof StatsBucketRecordSchema>;

/** Maps a bucket to its record: `Time` is its first instant in the configured zone. */
export const statsBucketRecord =
  (time: TimeFormat) =>
  (b: StatsBucketRow): StatsBucketRecord => ({
    Time: time.dateTime(b.start),
    Outbound: b.outbound,
    Inbound: b.inbound,
    Delivered: b.delivered,
    Undelivered: b.undelivered,
    Failed: b.failed,
    Rejected: b.rejected,
    Credits: b.credits,
  });
