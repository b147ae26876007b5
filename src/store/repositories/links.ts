import { sql } from 'kysely';
import { boundCount, prepareQuery } from '../prepared.ts';
import { LINK_COLUMNS, type LinkRow } from '../../records/links.ts';
import type { Db } from '../types.ts';

/**
 * Tracked links (docs/API.md §14.4.3): `message_links`, one row per (message, URL), and
 * `link_clicks`, one row per click. The redirect finds a link by its code alone (the code is
 * unique over the service, and `GET /l/{code}` carries no account); every other query is scoped
 * to the account. Times in epoch seconds. The links are written with their message
 * (src/store/repositories/personalise.ts).
 */

/** A link as the redirect sees it, with its click count after the click just counted. */
export interface CountedLink {
  id: number;
  account_id: number;
  message_id: number;
  url: string;
  clicks: number;
}

// A link whose message was erased (contacts/erase, docs/API.md §10.2.1) has lost its URL (`''`): no link.
const urlByCode = prepareQuery((db, code: string) =>
  db.selectFrom('message_links').select('url').where('code', '=', code).where('url', '<>', ''),
);

/** The original URL of the link with this code, in any account, if any (nothing is counted; an erased link is none). */
export async function findLinkUrl(db: Db, code: string): Promise<string | undefined> {
  return (await urlByCode.first(db, code))?.url;
}

// One statement finds the link and counts the click: `clicks + 1`, the first click's time kept,
// the last one's never moved back (two clicks in flight may commit in either order). The row lock
// this takes on PostgreSQL orders concurrent clicks of one link, so each gets its own count.
const count = prepareQuery((db, code: string, now: number) =>
  db
    .updateTable('message_links')
    .set({
      clicks: sql<number>`clicks + 1`,
      first_click_at: sql<number>`coalesce(first_click_at, cast(${now} as bigint))`,
      last_click_at: sql<number>`case when last_click_at is null or last_click_at < cast(${now} as bigint) then cast(${now} as bigint) else last_click_at end`,
    })
    .where('code', '=', code)
    .where('url', '<>', '')
    .returning(['id', 'account_id', 'message_id', 'url', 'clicks']),
);

/**
 * Counts one click of the link with this code (any account): `clicks` + 1, `first_click_at` set
 * on the first, `last_click_at` = `now` unless a later click came first.
 * @returns the link with its new count; undefined when no link has this code, or its message was
 *   erased (nothing changed).
 */
export async function countLinkClick(db: Db, code: string, now: number): Promise<CountedLink | undefined> {
  const row = await count.first(db, code, now);
  return row && { ...row, clicks: Number(row.clicks) };
}

const insertClick = prepareQuery((db, accountId: number, linkId: number, now: number, ip: string, userAgent: string) =>
  db.insertInto('link_clicks').values({ account_id: accountId, link_id: linkId, clicked_at: now, ip, user_agent: userAgent }),
);

/** Records one click of the account's link `linkId`: its time, truncated IP and user agent (already capped). */
export async function insertLinkClick(
  db: Db,
  accountId: number,
  linkId: number,
  now: number,
  ip: string,
  userAgent: string,
): Promise<void> {
  await insertClick.run(db, accountId, linkId, now, ip, userAgent);
}

const countOfMessage = prepareQuery((db, accountId: number, messageId: number) =>
  db
    .selectFrom('message_links')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('message_id', '=', messageId),
);

/** How many links the account's message `messageId` has. */
export async function countLinks(db: Db, accountId: number, messageId: number): Promise<number> {
  return Number((await countOfMessage.first(db, accountId, messageId))?.n ?? 0);
}

const pageOfMessage = prepareQuery((db, accountId: number, messageId: number, limit: number, offset: number) =>
  db
    .selectFrom('message_links')
    .select(LINK_COLUMNS)
    .where('account_id', '=', accountId)
    .where('message_id', '=', messageId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

/** One page of the links of the account's message `messageId`, by id ascending. */
export async function listLinks(db: Db, accountId: number, messageId: number, limit: number, offset: number): Promise<LinkRow[]> {
  return pageOfMessage.all(db, accountId, messageId, limit, offset);
}
