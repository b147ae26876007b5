import { sql } from 'kysely';
import { boundCount, isPostgres, prepareQuery } from './prepared.ts';
import type { Db } from './types.ts';

/**
 * Page anchors for deep pages of a list in id order (API.md §5 pagination by `page` and
 * `per-page`): the ids at positions 0, ANCHOR_STEP, 2 × ANCHOR_STEP, … of one account's rows. A
 * page far into the list then starts from the nearest anchor at or before its offset
 * (`id >= anchor … OFFSET < ANCHOR_STEP`) instead of stepping over `offset` index entries, so a
 * page near the end of a million rows costs about what page 1 does.
 *
 * On SQLite, anchors are found by walking the (account_id, id) index from one anchor to the next,
 * each step a query that skips ANCHOR_STEP - 1 index entries: no sort and no temporary table;
 * building those of a million rows reads the index once and holds nothing but the anchors. On
 * PostgreSQL each of those steps is a round trip and a plan of its own (3–77 ms each at a million
 * rows, 3–77 s for the thousand of them), so one query numbers the account's ids in order and keeps
 * every ANCHOR_STEP-th (0.4 s at a million rows).
 *
 * They are cached per database handle and account, and rebuilt when the account's list version
 * (kept by triggers on insert and delete, so any writer in any process moves it) changes. Requests
 * that need the same anchors while they are being built wait for that one build.
 */
export const ANCHOR_STEP = 1000;
const ANCHOR_CACHE_ACCOUNTS = 1000;

/** Tables listed by id whose (account_id, id) index the anchors walk. */
export type AnchoredTable = 'scheduled_messages' | 'contacts';

/** Where a page starts: from the row with id ≥ `fromId`, skipping `offset` rows. */
export interface PageStart {
  fromId: number;
  offset: number;
}

interface Anchors {
  version: number;
  ids: Promise<number[]>;
}

/**
 * The anchors of `table`. `version(db, accountId)` reads the account's list version.
 * @returns `startOf(db, accountId, offset)`: the anchored start of the page at `offset` (0-based
 *   row position), or undefined when the page should be read with a plain OFFSET (a shallow page,
 *   a transaction, or an offset past the last anchor).
 */
export function createAnchors(table: AnchoredTable, version: (db: Db, accountId: number) => Promise<number>) {
  const firstId = prepareQuery((db, accountId: number) =>
    db.selectFrom(table).select('id').where('account_id', '=', accountId).orderBy('id').limit(boundCount(1)),
  );
  const nextAnchor = prepareQuery((db, accountId: number, afterId: number) =>
    db
      .selectFrom(table)
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(boundCount(1))
      .offset(boundCount(ANCHOR_STEP - 1)),
  );
  const cache = new WeakMap<object, Map<number, Anchors>>();

  async function build(db: Db, accountId: number): Promise<number[]> {
    if (isPostgres(db)) {
      const { rows } = await sql<{
        id: number | string;
      }>`select "id" from (select "id", row_number() over (order by "id") as "n" from ${sql.table(table)} where "account_id" = ${accountId}) as "numbered" where ("n" - 1) % ${ANCHOR_STEP} = 0 order by "id"`.execute(
        db,
      );
      return rows.map((r) => Number(r.id));
    }
    const ids: number[] = [];
    let id = (await firstId.column(db, accountId))[0];
    while (id !== undefined) {
      ids.push(Number(id));
      id = (await nextAnchor.column(db, accountId, Number(id)))[0];
    }
    return ids;
  }

  return async function startOf(db: Db, accountId: number, offset: number): Promise<PageStart | undefined> {
    // Inside a transaction the rows may differ from what any cached anchor saw.
    if (offset < ANCHOR_STEP || db.isTransaction) return undefined;
    let byAccount = cache.get(db);
    if (!byAccount) cache.set(db, (byAccount = new Map<number, Anchors>()));
    const current = await version(db, accountId);
    let anchors = byAccount.get(accountId);
    if (!anchors || anchors.version !== current) {
      if (byAccount.size >= ANCHOR_CACHE_ACCOUNTS) byAccount.clear();
      const entry: Anchors = { version: current, ids: build(db, accountId) };
      byAccount.set(accountId, (anchors = entry));
      // A failed build is not kept: the next request tries again.
      entry.ids.catch(() => {
        if (byAccount.get(accountId) === entry) byAccount.delete(accountId);
      });
    }
    const ids = await anchors.ids;
    const k = Math.floor(offset / ANCHOR_STEP);
    const fromId = ids[k];
    return fromId === undefined ? undefined : { fromId, offset: offset - k * ANCHOR_STEP };
  };
}
