import { sql } from 'kysely';
import { boundCount, prepareQuery } from '../prepared.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * Keys (docs/API.md §15.2): the rows of `api_tokens`. A key is live while `revoked_at` is null;
 * deleting one sets `revoked_at` (the row stays, so the audit log's `key:{Id}:{Name}` keeps
 * naming it). Every read and write is scoped to the account.
 */

export type KeyRow = Row<'api_tokens'>;

/** What the authenticator needs of a key, found by the hash of a secret (current or rolled). */
export interface KeyAuthRow {
  id: number;
  account_id: number;
  token_hash: string;
  old_hash: string | null;
  old_expires_at: number | null;
  name: string;
  prefix: string;
  scopes: string;
  allowed_ips: string;
  expires_at: number | null;
  last_used_at: number | null;
  last_ip: string;
  /** The account's status (`active`, `suspended`, `closed`) and parent (API.md §16). */
  account_status: string;
  account_parent_id: number | null;
}

const AUTH_COLUMNS = [
  'id',
  'account_id',
  'token_hash',
  'old_hash',
  'old_expires_at',
  'name',
  'prefix',
  'scopes',
  'allowed_ips',
  'expires_at',
  'last_used_at',
  'last_ip',
] as const;

const QUALIFIED = AUTH_COLUMNS.map((c) => `t.${c}` as const);

const byHash = prepareQuery((db, hash: string) =>
  db
    .selectFrom('api_tokens as t')
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .select([...QUALIFIED, 'a.status as account_status', 'a.parent_id as account_parent_id'])
    .where('t.token_hash', '=', hash)
    .where('t.revoked_at', 'is', null),
);
const byOldHash = prepareQuery((db, hash: string) =>
  db
    .selectFrom('api_tokens as t')
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .select([...QUALIFIED, 'a.status as account_status', 'a.parent_id as account_parent_id'])
    .where('t.old_hash', '=', hash)
    .where('t.revoked_at', 'is', null),
);

/**
 * The live key whose current secret hashes to `hash`, else the live key whose rolled secret does
 * (`rolled` true: the caller checks `old_expires_at`).
 */
export async function findKeyByHash(db: Db, hash: string): Promise<{ row: KeyAuthRow; rolled: boolean } | undefined> {
  const row: KeyAuthRow | undefined = await byHash.first(db, hash);
  if (row) return { row, rolled: false };
  const old: KeyAuthRow | undefined = await byOldHash.first(db, hash);
  return old ? { row: old, rolled: true } : undefined;
}

/** Records a use: the time (to the minute), the address, and the prefix when it was not known. */
export async function touchKey(db: Db, id: number, at: number, ip: string, prefix: string | undefined): Promise<void> {
  await db
    .updateTable('api_tokens')
    .set({ last_used_at: at, last_ip: ip, ...(prefix !== undefined ? { prefix } : {}) })
    .where('id', '=', id)
    .execute();
}

export async function countKeys(db: Db, accountId: number): Promise<number> {
  const r = await db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function listKeys(db: Db, accountId: number, limit: number, offset: number): Promise<KeyRow[]> {
  return db
    .selectFrom('api_tokens')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset))
    .execute();
}

export async function findKey(db: Db, accountId: number, id: number): Promise<KeyRow | undefined> {
  return db
    .selectFrom('api_tokens')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** A key's name, live or not (the audit log's actor). */
export async function keyName(db: Db, id: number): Promise<string | undefined> {
  const r = await db.selectFrom('api_tokens').select('name').where('id', '=', id).executeTakeFirst();
  return r?.name;
}

export interface NewKey {
  accountId: number;
  hash: string;
  prefix: string;
  name: string;
  scopes: string;
  allowedIps: string;
  expiresAt: number | null;
  now: number;
}

export async function insertKey(db: Db, k: NewKey): Promise<number> {
  const { id } = await db
    .insertInto('api_tokens')
    .values({
      account_id: k.accountId,
      token_hash: k.hash,
      label: '',
      name: k.name,
      prefix: k.prefix,
      scopes: k.scopes,
      allowed_ips: k.allowedIps,
      expires_at: k.expiresAt,
      created_at: k.now,
      updated_at: k.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

export async function updateKey(
  db: Db,
  accountId: number,
  id: number,
  set: Partial<Pick<KeyRow, 'name' | 'scopes' | 'allowed_ips' | 'expires_at'>>,
  now: number,
): Promise<void> {
  await db
    .updateTable('api_tokens')
    .set({ ...set, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A new secret: the current hash becomes the rolled one until `graceEnds`. */
export async function rollKey(
  db: Db,
  accountId: number,
  id: number,
  hash: string,
  prefix: string,
  graceEnds: number,
  now: number,
): Promise<void> {
  await db
    .updateTable('api_tokens')
    .set({
      old_hash: sql<string>`token_hash`,
      old_expires_at: graceEnds,
      token_hash: hash,
      prefix,
      updated_at: now,
    })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes a key (it stops at once); its sessions end too. Returns how many keys were revoked. */
export async function revokeKey(db: Db, accountId: number, id: number, now: number): Promise<number> {
  const res = await db
    .updateTable('api_tokens')
    .set({ revoked_at: now, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  await db.deleteFrom('sessions').where('key_id', '=', id).execute();
  return Number(res.numUpdatedRows);
}
