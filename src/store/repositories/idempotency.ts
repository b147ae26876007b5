import { prepareQuery } from '../prepared.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * Idempotency-Key records (API.md §7): one row per account and key (`idempotency_keys`), or per
 * operator key and key on `/admin/v1` (`operator_idempotency_keys`, §16.4). The primary key decides
 * which of two racing requests (in this process or another instance) runs; the other one reads the
 * row. A row with `response_status` null is in progress.
 */

/**
 * A stored Idempotency-Key row as the HTTP layer reads it (API.md §7): `response_status`
 * null while the first request is still running; `response_body` the response payload as JSON
 * text, or null when the response had no body.
 */
export type IdempotencyRow = Pick<
  Row<'idempotency_keys'>,
  'fingerprint' | 'response_status' | 'response_body' | 'response_location' | 'expires_at'
>;

/**
 * The owner of a key: an account (its id, > 0) in `idempotency_keys`, or an operator key (the
 * negative of its id, < 0) in `operator_idempotency_keys` (migration 027, API.md §16.4), as the
 * rate limit counts an operator apart from every account.
 */
type Owner = number;

/**
 * The queries of one table of keys. Both tables have the same columns but the owner's; the
 * queries are written against `idempotency_keys` and built with the other table's names (the SQL
 * names are the only difference).
 */
function queriesOf(tableName: 'idempotency_keys' | 'operator_idempotency_keys', ownerName: 'account_id' | 'operator_key_id') {
  const table = tableName as 'idempotency_keys';
  const owner = ownerName as 'account_id';
  const expires = `${tableName}.expires_at` as 'idempotency_keys.expires_at';
  return {
    claim: prepareQuery((db, ownerId: number, key: string, fingerprint: string, now: number, expiresAt: number) => {
      // A new row, or an expired one taken over: in progress, no response yet.
      const fresh = {
        fingerprint,
        response_status: null,
        response_body: null,
        response_location: null,
        created_at: now,
        expires_at: expiresAt,
      };
      return (
        db
          .insertInto(table)
          .values({ [owner]: ownerId, key, ...fresh } as Row<'idempotency_keys'>)
          // An expired row is taken over in the same statement; a live one is left alone (no row returned).
          .onConflict((oc) => oc.columns([owner, 'key']).doUpdateSet(fresh).where(expires, '<=', now))
          .returning('key')
      );
    }),
    find: prepareQuery((db, ownerId: number, key: string) =>
      db
        .selectFrom(table)
        .select(['fingerprint', 'response_status', 'response_body', 'response_location', 'expires_at'])
        .where(owner, '=', ownerId)
        .where('key', '=', key),
    ),
    complete: prepareQuery(
      (db, ownerId: number, key: string, fingerprint: string, status: number, body: string | null, location: string | null) =>
        db
          .updateTable(table)
          .set({ fingerprint, response_status: status, response_body: body, response_location: location })
          .where(owner, '=', ownerId)
          .where('key', '=', key)
          .where('response_status', 'is', null),
    ),
    release: prepareQuery((db, ownerId: number, key: string) =>
      db.deleteFrom(table).where(owner, '=', ownerId).where('key', '=', key).where('response_status', 'is', null),
    ),
    purge: prepareQuery((db, now: number) => db.deleteFrom(table).where('expires_at', '<=', now)),
    forget: prepareQuery((db, ownerId: number, key: string) => db.deleteFrom(table).where(owner, '=', ownerId).where('key', '=', key)),
  };
}

const ACCOUNT_KEYS = queriesOf('idempotency_keys', 'account_id');
const OPERATOR_KEYS = queriesOf('operator_idempotency_keys', 'operator_key_id');

/** The queries of the owner's table, and the owner's id in it. */
function tableOf(owner: Owner): [ReturnType<typeof queriesOf>, number] {
  return owner > 0 ? [ACCOUNT_KEYS, owner] : [OPERATOR_KEYS, -owner];
}

/**
 * Claims `key` for its owner (an account, or an operator key as a negative id; API.md §7): inserts
 * an in-progress row, or takes over an expired one.
 * Returns false (writing nothing) when a live row already holds the key. Atomic on both stores,
 * so of any number of concurrent claims on one key exactly one succeeds.
 */
export async function claimIdempotencyKey(
  db: Db,
  owner: Owner,
  key: string,
  fingerprint: string,
  now: number,
  expiresAt: number,
): Promise<boolean> {
  const [q, id] = tableOf(owner);
  return (await q.claim.first(db, id, key, fingerprint, now, expiresAt)) !== undefined;
}

/** The owner's row for `key`, expired or not, if any (API.md §7). */
export async function findIdempotencyKey(db: Db, owner: Owner, key: string): Promise<IdempotencyRow | undefined> {
  const [q, id] = tableOf(owner);
  const row = await q.find.first(db, id, key);
  // PostgreSQL returns bigint columns as text.
  return (
    row && {
      ...row,
      expires_at: Number(row.expires_at),
      response_status: row.response_status === null ? null : Number(row.response_status),
    }
  );
}

/**
 * Records the response of the request that holds the in-progress row (status below 500: API.md
 * §7 keeps those), with the request's final fingerprint. Returns false when there was no in-progress row to complete.
 */
export async function completeIdempotencyKey(
  db: Db,
  owner: Owner,
  key: string,
  r: { fingerprint: string; status: number; body: string | null; location: string | null },
): Promise<boolean> {
  const [q, id] = tableOf(owner);
  return (await q.complete.run(db, id, key, r.fingerprint, r.status, r.body, r.location)) > 0;
}

/** Deletes the in-progress row of `key` (a 5xx is not kept, API.md §7), so the key may be used again. */
export async function releaseIdempotencyKey(db: Db, owner: Owner, key: string): Promise<boolean> {
  const [q, id] = tableOf(owner);
  return (await q.release.run(db, id, key)) > 0;
}

/** Deletes every row past its 24 hours (API.md §7), accounts' and operators', by the expires_at indexes; returns how many went. */
export async function deleteExpiredIdempotencyKeys(db: Db, now: number): Promise<number> {
  return (await ACCOUNT_KEYS.purge.run(db, now)) + (await OPERATOR_KEYS.purge.run(db, now));
}

/** Deletes the row of `key` whatever its state: a kept response that then failed to go out as a 5xx (API.md §7). */
export async function forgetIdempotencyKey(db: Db, owner: Owner, key: string): Promise<boolean> {
  const [q, id] = tableOf(owner);
  return (await q.forget.run(db, id, key)) > 0;
}
