import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, NullableStr, Str } from './common.ts';

/**
 * Tracked links (docs/API.md §14.4.3): the record `sms/links?id=` lists, and the data of the
 * `link.clicked` webhook event.
 *
 * Choices the contract leaves open, written down here:
 * - `FirstClick` and `LastClick` are `null` until the first click (as a Message's `DateSent`
 *   before it is sent), rendered `<FirstClick></FirstClick>` in XML like every null; after it they
 *   are record dates (`YYYY-MM-DD HH:MM:SS` in the configured zone, API.md §9).
 * - The record is named `TrackedLink` (OpenAPI component), not `Link`, which is also a header.
 */

/** The columns of `message_links` a TrackedLink record shows (`id`: its order). */
export const LINK_COLUMNS = ['id', 'code', 'url', 'clicks', 'first_click_at', 'last_click_at'] as const;
/** A stored link as the record shows it (times in epoch seconds, null before the first click). */
export type LinkRow = Pick<Row<'message_links'>, (typeof LINK_COLUMNS)[number]>;

/** docs/API.md §14.4.3 TrackedLink record, fields in its order. */
export const TrackedLinkRecordSchema = Type.Object({
  Url: Str(),
  Code: Str(),
  Clicks: Int(),
  FirstClick: NullableStr(),
  LastClick: NullableStr(),
});
export type TrackedLinkRecord = Static<typeof TrackedLinkRecordSchema>;

/** Maps a stored link to its TrackedLink record, times in `time`'s zone (null before the first click). */
export const trackedLinkRecord =
  (time: TimeFormat) =>
  (r: LinkRow): TrackedLinkRecord => ({
    Url: r.url,
    Code: r.code,
    Clicks: Number(r.clicks),
    FirstClick: r.first_click_at === null ? null : time.dateTime(Number(r.first_click_at)),
    LastClick: r.last_click_at === null ? null : time.dateTime(Number(r.last_click_at)),
  });

/**
 * The stored data of a `link.clicked` event (the outbox payload, src/records/webhooks.ts): the
 * message's id, the original URL and the link's click count after this click.
 */
export interface LinkClickedRow {
  message_id: number;
  url: string;
  clicks: number;
}

/** The `data` of a `link.clicked` event body (docs/API.md §12.1), keys in this order. */
export interface LinkClickedData {
  MessageId: number;
  Url: string;
  Clicks: number;
}

/** Renders a stored `link.clicked` row as the event's `data`. */
export function linkClickedData(r: LinkClickedRow): LinkClickedData {
  return { MessageId: Number(r.message_id), Url: r.url, Clicks: Number(r.clicks) };
}
