import { prepareQuery } from '../prepared.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * Idempotency-Key records (API.md §7): one row per account and key. The primary key
 * (account_id, key) decides which of two racing requests (in this process or another instance)
 * runs; the other one reads the row. A row with `response_status` null is in progress.
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

const claim = prepareQuery((db, accountId: number, key: string, fingerprint: string, now: number, expiresAt: number) =>
  db
    .insertInto('idempotency_keys')
    .values({
      account_id: accountId,
      key,
      fingerprint,
      response_status: null,
      response_body: null,
      response_location: null,
      created_at: now,
      expires_at: expiresAt,
    })
    // An expired row is taken over in the same statement; a live one is left alone (no row returned).
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'key'])
        .doUpdateSet({
          fingerprint,
          response_status: null,
          response_body: null,
          response_location: null,
          created_at: now,
          expires_at: expiresAt,
        })
        .where('idempotency_keys.expires_at', '<=', now),
    )
    .returning('key'),
);

/**
 * Claims `key` for the account (API.md §7): inserts an in-progress row, or takes over an
 * expired one.
 * Returns false (writing nothing) when a live row already holds the key. Atomic on both stores,
 * so of any number of concurrent claims on one key exactly one succeeds.
 */
export async function claimIdempotencyKey(
  db: Db,
  accountId: number,
  key: string,
  fingerprint: string,
  now: number,
  expiresAt: number,
): Promise<boolean> {
  return (await claim.first(db, accountId, key, fingerprint, now, expiresAt)) !== undefined;
}

const find = prepareQuery((db, accountId: number, key: string) =>
  db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'response_status', 'response_body', 'response_location', 'expires_at'])
    .where('account_id', '=', accountId)
    .where('key', '=', key),
);

/** The account's row for `key`, expired or not, if any (API.md §7). */
export async function findIdempotencyKey(db: Db, accountId: number, key: string): Promise<IdempotencyRow | undefined> {
  const row = await find.first(db, accountId, key);
  // PostgreSQL returns bigint columns as text.
  return (
    row && {
      ...row,
      expires_at: Number(row.expires_at),
      response_status: row.response_status === null ? null : Number(row.response_status),
    }
  );
}

const complete = prepareQuery(
  (db, accountId: number, key: string, fingerprint: string, status: number, body: string | null, location: string | null) =>
    db
      .updateTable('idempotency_keys')
      .set({ fingerprint, response_status: status, response_body: body, response_location: location })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('response_status', 'is', null),
);

/**
 * Records the response of the request that holds the in-progress row (status below 500: API.md
 * API.md §7 keeps those), with the request's final fingerprint. Returns false when there was no in-progress row to complete.
 */
export async function completeIdempotencyKey(
  db: Db,
  accountId: number,
  key: string,
  r: { fingerprint: string; status: number; body: string | null; location: string | null },
): Promise<boolean> {
  return (await complete.run(db, accountId, key, r.fingerprint, r.status, r.body, r.location)) > 0;
}

const release = prepareQuery((db, accountId: number, key: string) =>
  db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('response_status', 'is', null),
);

/** Deletes the in-progress row of `key` (a 5xx is not kept, API.md §7), so the key may be used again. */
export async function releaseIdempotencyKey(db: Db, accountId: number, key: string): Promise<boolean> {
  return (await release.run(db, accountId, key)) > 0;
}

const purge = prepareQuery((db, now: number) => db.deleteFrom('idempotency_keys').where('expires_at', '<=', now));

/** Deletes every row past its 24 hours (API.md §7), by the expires_at index; returns how many went. */
export async function deleteExpiredIdempotencyKeys(db: Db, now: number): Promise<number> {
  return purge.run(db, now);
}

const forget = prepareQuery((db, accountId: number, key: string) =>
  db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key),
);

/** Deletes the row of `key` whatever its state: a kept response that then failed to go out as a 5xx (API.md §7). */
export async function forgetIdempotencyKey(db: Db, accountId: number, key: string): Promise<boolean> {
  return (await forget.run(db, accountId, key)) > 0;
}
