import { sql, type RawBuilder } from 'kysely';
import { isPostgres, prepareQuery } from './prepared.ts';
import type { Db } from './types.ts';

/** Tables of leased work: `due_at` (epoch ms) says when a row is due, `lease_token` who holds it. */
export type LeasedTable = 'messages' | 'scheduled_messages' | 'webhook_deliveries';

/**
 * The claim of the background workers (the dispatcher, the scheduler, the webhook deliverer;
 * API.md §11.2): up to `limit` rows with `due_at <= now`, oldest due first, leased to `token`
 * until `leaseUntil` (their `due_at` becomes the lease's end, so a worker that dies leaves them due
 * again then), in ONE autocommit statement per store, committed on return: PostgreSQL picks the
 * rows `FOR UPDATE SKIP LOCKED` (rows another worker is claiming are skipped), SQLite runs one
 * `UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING` (one writer at a time). No two workers hold
 * the same row.
 * @param columns the columns returned for each claimed row.
 * @param countAttempt also add one to `attempts`.
 * @returns `claim(db, now, limit, leaseUntil, token)`: the claimed rows.
 */
export function leaseClaim<R>(table: LeasedTable, columns: readonly string[], countAttempt: boolean) {
  const attempts = countAttempt ? sql`, attempts = attempts + 1` : sql``;
  const attemptsT = countAttempt ? sql`, attempts = t.attempts + 1` : sql``;
  const query = prepareQuery((db, now: number, limit: number, leaseUntil: number, token: string) => ({
    compile: () =>
      (isPostgres(db)
        ? sql`with due as materialized (
              select id from ${sql.table(table)} where due_at <= ${now} order by due_at limit ${limit} for update skip locked)
            update ${sql.table(table)} t set due_at = ${leaseUntil}, lease_token = ${token}${attemptsT}
            from due where t.id = due.id
            returning ${sql.raw(columns.map((c) => `t.${c}`).join(', '))}`
        : sql`update ${sql.table(table)} set due_at = ${leaseUntil}, lease_token = ${token}${attempts}
            where id in (select id from ${sql.table(table)} where due_at <= ${now} order by due_at limit ${limit})
            returning ${sql.raw(columns.join(', '))}`
      ).compile(db),
  }));
  return (db: Db, now: number, limit: number, leaseUntil: number, token: string): Promise<R[]> =>
    query.all(db, now, limit, leaseUntil, token) as Promise<R[]>;
}

/** What the account-fair claim of messages (fairMessageClaim) takes besides the lease. */
export interface FairClaimParams {
  /** Now, epoch ms: rows with `due_at <= now` are due. */
  now: number;
  /** Most rows claimed (the dispatcher's batch). */
  limit: number;
  /** The lease's end, epoch ms: the claimed rows' new `due_at`. */
  leaseUntil: number;
  token: string;
  /** Only accounts whose id is above it are looked at (the round-robin cursor; 0: from the first account). */
  cursor: number;
  /**
   * How many of an account's due messages count, at most, towards the `limit` messages' worth of
   * accounts one claim looks at (1 to `limit`): `limit / perAccount` accounts with a backlog per
   * claim, and any number with fewer messages (see fairMessageClaim).
   */
  perAccount: number;
  /**
   * Per account with `max_per_second > 0`, how many of its messages this claim may take (its share of
   * the current second, src/dispatch/send-counter.ts), as a JSON object `{"<account id>": n}`. Such an
   * account that is not in it gets none.
   */
  grantsJson: string;
}

/**
 * The claim of the dispatcher (API.md §11.2, §16 "Quotas and fairness"): the lease of leaseClaim
 * (the same columns set, `attempts` + 1, in ONE autocommit statement per store, `FOR UPDATE SKIP
 * LOCKED` on PostgreSQL, so no two dispatchers hold the same message and a dead one's rows are due
 * again when their lease ends), but SHARED BETWEEN ACCOUNTS instead of oldest due first: with
 * oldest-first, one account's send-group of a million messages is ahead of every message queued
 * after it, and another account's single message waited for the whole backlog.
 *
 * How the rows are chosen (all inside the one statement):
 * 1. `walk`: the accounts that have pending messages (`due_at` not null), in id order from `cursor`
 *    up, a few index seeks each (a loose index scan of `messages_account_due_ix` (account_id,
 *    due_at, id) WHERE due_at IS NOT NULL, never a pass over the rows of one account). ELIGIBLE:
 *    the account is `active` (a suspended or closed account's messages are never claimed; they
 *    wait Queued), it has a message due now, and it is not capped by MaxPerSecond (`max_per_second`
 *    0, or a grant > 0 in `grantsJson`). The walk stops once the eligible accounts' due messages,
 *    each account's counted up to `perAccount`, reach `limit`: so a claim takes at most
 *    `limit / perAccount` accounts with a backlog, and as many accounts with a message or two as
 *    fill the batch. Why not every account with a backlog, a few messages each: each account is
 *    another range of the table and its indexes that the claim, the Sent and the receipt write,
 *    and rounds over 100 accounts cost the dispatcher about 40 % of its throughput on SQLite
 *    (src/store/repositories/dispatch.ts BACKLOGGED_PER_CLAIM);
 * 2. `share`: an even share per eligible account, `l = ceil(limit / accounts)`;
 * 3. `demand`, `more`, `cap`: each account's due messages are counted up to `l` (at most `l` index
 *    entries read per account); what the accounts with fewer than `l` leave unused is shared
 *    among those that have more (one level of max-min fairness: account A with a million and B
 *    with one message: B 1, A `limit − 1`). An account capped by MaxPerSecond never gets more
 *    than its grant;
 * 4. `picked`: each account's first `cap` due messages, oldest due first (`due_at`, then `id`), by
 *    one index range each; `chosen`: the first of every account, then the second of every account,
 *    … (oldest due first within a rank), at most `limit`.
 * Cost: O(accounts walked + limit) index entries, whatever the backlog. Measured, a claim of 500
 * with a million due rows of one account: SQLite about 3 ms (oldest-first: 2 ms); PostgreSQL about
 * 5 ms to choose the rows, in a statement of about 30 ms (oldest-first: about 20 ms) that is mostly
 * the update of the 500 rows and their index entries.
 *
 * Store differences. SQLite runs one writer at a time, so the statement's reads and its update
 * cannot interleave with another claim; it has no LATERAL and no LIMIT that depends on the row,
 * so the picks read up to the largest cap per account and `row_number()` keeps each account's
 * own; its CTEs are MATERIALIZED, else it evaluates them again for every use. PostgreSQL picks
 * with `LATERAL (… LIMIT cap FOR UPDATE SKIP LOCKED)` per account: rows another dispatcher is
 * claiming are skipped, not waited for, and rows re-checked after a concurrent claim committed
 * fail `due_at <= now` and are left. Its per-account conditions are written `account_id >= a AND
 * account_id <= a … ORDER BY account_id, due_at`: for an equality with an outer value the planner
 * may walk the older `due_at` index and filter by account (it guesses an account's share of the
 * rows from the number of accounts), which reads the big account's whole backlog before it finds a
 * small one's message; the range keeps the order only the (account_id, due_at, id) index gives.
 *
 * The dispatcher moves `cursor` past the last account served when a claim filled its batch (the
 * walk may have stopped there), and back to 0 otherwise (the walk reached the last account), so
 * that more accounts than one claim serves all get their turn.
 *
 * @param columns the columns returned for each claimed row.
 * @returns `claim(db, params)`: the claimed rows.
 */
export function fairMessageClaim<R>(columns: readonly string[]) {
  const query = prepareQuery(
    (db, now: number, limit: number, leaseUntil: number, token: string, cursor: number, perAccount: number, grantsJson: string) => ({
      compile: () => {
        if (isPostgres(db)) {
          const n = sql`cast(${now} as bigint)`;
          const lim = sql`cast(${limit} as integer)`;
          const grant = sql`coalesce(cast(cast(${grantsJson} as jsonb) ->> cast(ac.id as text) as integer), 0)`;
          const unthrottled = sql`ac.status = 'active' and (ac.max_per_second = 0 or ${grant} > 0)`;
          // An account's due messages, at most `max` of them, read off its range of the index.
          const dueUpTo = (a: RawBuilder<unknown>, max: RawBuilder<unknown>) =>
            sql`(select count(*) from (select 1 from messages where account_id >= ${a} and account_id <= ${a} and due_at <= ${n}
                order by account_id, due_at limit ${max}) x)`;
          return sql`with recursive
            walk(a, d, k) as (
              (select account_id, due_at, cast(0 as bigint) from messages
                where due_at is not null and account_id > cast(${cursor} as integer) order by account_id, due_at limit 1)
              union all
              select nx.account_id, nx.due_at,
                walk.k + case when walk.d <= ${n} and exists (select 1 from accounts ac where ac.id = walk.a and ${unthrottled})
                  then ${dueUpTo(sql`walk.a`, sql`cast(${perAccount} as integer)`)} else 0 end
              from walk cross join lateral (
                select account_id, due_at from messages where due_at is not null and account_id > walk.a
                order by account_id, due_at limit 1) nx
              where walk.k < ${lim}
            ),
            elig(a, want) as (
              select ac.id, case when ac.max_per_second = 0 then ${lim} else least(${lim}, ${grant}) end
              from walk join accounts ac on ac.id = walk.a
              where walk.k < ${lim} and walk.d <= ${n} and ${unthrottled}
            ),
            share(l) as (select (${lim} + count(*) - 1) / greatest(count(*), 1) from elig),
            demand(a, want, due) as (select a, want, ${dueUpTo(sql`elig.a`, sql`(select l from share)`)} from elig),
            more(lmax) as (
              select l + (${lim} - (select coalesce(sum(least(want, due)), 0) from demand) + f.n - 1) / greatest(f.n, 1)
              from share, (select count(*) as n from demand, share where due >= l and want > l) f
            ),
            cap(a, c) as (
              select a, case when due >= l and want > l then least(want, lmax) else least(want, due) end from demand, share, more
            ),
            picked as materialized (
              select m.id, m.account_id, m.due_at from cap cross join lateral (
                select id, account_id, due_at from messages
                where account_id >= cap.a and account_id <= cap.a and due_at <= ${n}
                order by account_id, due_at, id limit cap.c for update skip locked) m
            ),
            chosen as (
              select id from (select id, due_at, row_number() over (partition by account_id order by due_at, id) as rn from picked) r
              order by rn, due_at, id limit ${lim}
            )
            update messages t set due_at = ${leaseUntil}, lease_token = ${token}, attempts = t.attempts + 1
            from chosen where t.id = chosen.id
            returning ${sql.raw(columns.map((c) => `t.${c}`).join(', '))}`.compile(db);
        }
        // SQLite binds JavaScript numbers as REAL: the counts and limits are cast, so that the
        // divisions are whole and LIMIT gets an integer.
        const lim = sql`cast(${limit} as integer)`;
        const grant = sql`coalesce(json_extract(${grantsJson}, '$."' || ac.id || '"'), 0)`;
        const unthrottled = sql`ac.status = 'active' and (ac.max_per_second = 0 or ${grant} > 0)`;
        const dueUpTo = (a: RawBuilder<unknown>, max: RawBuilder<unknown>) =>
          sql`(select count(*) from (select 1 from messages where account_id = ${a} and due_at <= ${now} limit ${max}))`;
        return sql`with recursive
          walk(a, k) as (
            select (select account_id from messages where due_at is not null and account_id > cast(${cursor} as integer)
              order by account_id limit 1), 0
            union all
            select (select account_id from messages where due_at is not null and account_id > walk.a order by account_id limit 1),
              walk.k + case when exists (select 1 from accounts ac where ac.id = walk.a and ${unthrottled})
                then ${dueUpTo(sql`walk.a`, sql`cast(${perAccount} as integer)`)} else 0 end
            from walk where walk.a is not null and walk.k < ${lim}
          ),
          elig(a, want) as materialized (
            select ac.id, case when ac.max_per_second = 0 then ${lim} else min(${lim}, ${grant}) end
            from walk join accounts ac on ac.id = walk.a
            where walk.k < ${lim} and ${unthrottled} and exists (select 1 from messages where account_id = walk.a and due_at <= ${now})
          ),
          share(l) as materialized (select (${lim} + count(*) - 1) / max(count(*), 1) from elig),
          demand(a, want, due) as materialized (select a, want, ${dueUpTo(sql`elig.a`, sql`(select l from share)`)} from elig),
          more(lmax) as materialized (
            select l + (${lim} - (select coalesce(sum(min(want, due)), 0) from demand) + f.n - 1) / max(f.n, 1)
            from share, (select count(*) as n from demand, share where due >= l and want > l) f
          ),
          cap(a, c) as materialized (
            select a, case when due >= l and want > l then min(want, lmax) else min(want, due) end from demand, share, more
          ),
          top(c) as materialized (select max(c) from cap),
          picked as materialized (
            select m.id, m.account_id, m.due_at, cap.c from cap join messages m on m.id in (
              select id from messages where account_id = cap.a and due_at <= ${now}
              order by due_at, id limit (select c from top))
          ),
          chosen as (
            select id from (select id, due_at, c, row_number() over (partition by account_id order by due_at, id) as rn from picked)
            where rn <= c order by rn, due_at, id limit ${lim}
          )
          update messages set due_at = ${leaseUntil}, lease_token = ${token}, attempts = attempts + 1
          where id in (select id from chosen)
          returning ${sql.raw(columns.join(', '))}`.compile(db);
      },
    }),
  );
  return (db: Db, p: FairClaimParams): Promise<R[]> =>
    query.all(db, p.now, p.limit, p.leaseUntil, p.token, p.cursor, p.perAccount, p.grantsJson) as Promise<R[]>;
}

/**
 * The priority lane of the dispatcher (API.md §17 `Priority`): before the account-fair claim of a
 * round, up to `limit` due messages of Priority 1, oldest due first, from `active` accounts, an
 * account with MaxPerSecond no more than its grant in `grantsJson` (as fairMessageClaim). The lease
 * of leaseClaim, in ONE autocommit statement per store (`FOR UPDATE SKIP LOCKED` on PostgreSQL).
 * It reads the partial index `messages_priority_due_ix` (migration 025), which holds only the
 * Priority 1 messages not yet ended: while no one uses the lane the statement is one probe of an
 * empty index, and a Priority 1 message never waits behind the Priority 0 backlog of any account.
 * @returns `claim(db, params)`: the claimed rows (`cursor` and `perAccount` are not used).
 */
export function priorityMessageClaim<R>(columns: readonly string[]) {
  const query = prepareQuery((db, now: number, limit: number, leaseUntil: number, token: string, grantsJson: string) => ({
    compile: () => {
      if (isPostgres(db)) {
        const grant = sql`coalesce(cast(cast(${grantsJson} as jsonb) ->> cast(ac.id as text) as integer), 0)`;
        return sql`with cand as materialized (
            select m.id, m.account_id, m.due_at from messages m
            where m.priority = 1 and m.due_at <= cast(${now} as bigint)
              and exists (select 1 from accounts ac where ac.id = m.account_id and ac.status = 'active' and (ac.max_per_second = 0 or ${grant} > 0))
            order by m.due_at, m.id limit cast(${limit} as integer) for update of m skip locked
          ),
          chosen as (
            select c.id from (select id, account_id, row_number() over (partition by account_id order by due_at, id) as rn from cand) c
            join accounts ac on ac.id = c.account_id
            where ac.max_per_second = 0 or c.rn <= ${grant}
          )
          update messages t set due_at = ${leaseUntil}, lease_token = ${token}, attempts = t.attempts + 1
          from chosen where t.id = chosen.id
          returning ${sql.raw(columns.map((c) => `t.${c}`).join(', '))}`.compile(db);
      }
      const grant = sql`coalesce(json_extract(${grantsJson}, '$."' || ac.id || '"'), 0)`;
      return sql`update messages set due_at = ${leaseUntil}, lease_token = ${token}, attempts = attempts + 1
          where id in (
            select id from (
              select m.id, ac.max_per_second as mps, ${grant} as g,
                row_number() over (partition by m.account_id order by m.due_at, m.id) as rn
              from messages m join accounts ac on ac.id = m.account_id
              where m.priority = 1 and m.due_at <= ${now} and ac.status = 'active'
              order by m.due_at, m.id limit cast(${limit} as integer))
            where mps = 0 or rn <= g)
          returning ${sql.raw(columns.join(', '))}`.compile(db);
    },
  }));
  return (db: Db, p: Pick<FairClaimParams, 'now' | 'limit' | 'leaseUntil' | 'token' | 'grantsJson'>): Promise<R[]> =>
    query.all(db, p.now, p.limit, p.leaseUntil, p.token, p.grantsJson) as Promise<R[]>;
}
