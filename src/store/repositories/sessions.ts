import type { Db } from '../types.ts';

/** Console sessions (docs/API.md §15.3), by the SHA-256 hash of the cookie's value. */

export interface SessionLookup {
  id: number;
  account_id: number;
  csrf_token: string;
  user_id: number | null;
  key_id: number | null;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  user_email: string | null;
  user_role: string | null;
  key_name: string | null;
  key_scopes: string | null;
  key_allowed_ips: string | null;
  key_expires_at: number | null;
  /** The account's status and parent (API.md §16). */
  account_status: string;
  account_parent_id: number | null;
}

/** The session with this hash, with its person or its (live) key. */
export async function findSession(db: Db, hash: string): Promise<SessionLookup | undefined> {
  return db
    .selectFrom('sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .leftJoin('users as u', (j) => j.onRef('u.id', '=', 's.user_id').onRef('u.account_id', '=', 's.account_id'))
    .leftJoin('api_tokens as k', (j) =>
      j.onRef('k.id', '=', 's.key_id').onRef('k.account_id', '=', 's.account_id').on('k.revoked_at', 'is', null),
    )
    .select([
      's.id',
      's.account_id',
      's.csrf_token',
      's.user_id',
      's.key_id',
      's.created_at',
      's.last_used_at',
      's.expires_at',
      'u.email as user_email',
      'u.role as user_role',
      'k.name as key_name',
      'k.scopes as key_scopes',
      'k.allowed_ips as key_allowed_ips',
      'k.expires_at as key_expires_at',
      'a.status as account_status',
      'a.parent_id as account_parent_id',
    ])
    .where('s.token_hash', '=', hash)
    .executeTakeFirst();
}

export async function touchSession(db: Db, id: number, now: number): Promise<void> {
  await db.updateTable('sessions').set({ last_used_at: now }).where('id', '=', id).execute();
}

export interface NewSession {
  hash: string;
  csrf: string;
  accountId: number;
  userId: number | null;
  keyId: number | null;
  now: number;
  expiresAt: number;
}

export async function insertSession(db: Db, s: NewSession): Promise<number> {
  const { id } = await db
    .insertInto('sessions')
    .values({
      token_hash: s.hash,
      csrf_token: s.csrf,
      account_id: s.accountId,
      user_id: s.userId,
      key_id: s.keyId,
      created_at: s.now,
      last_used_at: s.now,
      expires_at: s.expiresAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

export async function deleteSession(db: Db, id: number): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

/** Ends every session of a person (reset, removal). */
export async function deleteUserSessions(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
}

/** Sessions that can no longer be used (past 7 days or idle past the limit), for the purge. */
export async function purgeSessions(db: Db, now: number, idleSeconds: number): Promise<number> {
  const r = await db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_used_at', '<=', now - idleSeconds)]))
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

// ------------------------------------------------------------------ the operator's sessions (API.md §16.4)

/** An operator's console session, with its (live) operator key's name. */
export interface OperatorSessionLookup {
  id: number;
  csrf_token: string;
  operator_key_id: number;
  operator_name: string;
  last_used_at: number;
  expires_at: number;
}

/** The operator session with this hash whose operator key is not revoked. */
export async function findOperatorSession(db: Db, hash: string): Promise<OperatorSessionLookup | undefined> {
  const row = await db
    .selectFrom('operator_sessions as s')
    .innerJoin('operator_keys as k', 'k.id', 's.operator_key_id')
    .select(['s.id', 's.csrf_token', 's.operator_key_id', 'k.name as operator_name', 's.last_used_at', 's.expires_at'])
    .where('s.token_hash', '=', hash)
    .where('k.revoked_at', 'is', null)
    .executeTakeFirst();
  return (
    row && {
      ...row,
      id: Number(row.id),
      operator_key_id: Number(row.operator_key_id),
      last_used_at: Number(row.last_used_at),
      expires_at: Number(row.expires_at),
    }
  );
}

export async function insertOperatorSession(
  db: Db,
  s: { hash: string; csrf: string; operatorKeyId: number; now: number; expiresAt: number },
): Promise<number> {
  const { id } = await db
    .insertInto('operator_sessions')
    .values({
      token_hash: s.hash,
      csrf_token: s.csrf,
      operator_key_id: s.operatorKeyId,
      created_at: s.now,
      last_used_at: s.now,
      expires_at: s.expiresAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(id);
}

export async function touchOperatorSession(db: Db, id: number, now: number): Promise<void> {
  await db.updateTable('operator_sessions').set({ last_used_at: now }).where('id', '=', id).execute();
}

export async function deleteOperatorSession(db: Db, id: number): Promise<void> {
  await db.deleteFrom('operator_sessions').where('id', '=', id).execute();
}

/** Operator sessions past their limits, or whose key was revoked, for the purge. */
export async function purgeOperatorSessions(db: Db, now: number, idleSeconds: number): Promise<number> {
  const r = await db
    .deleteFrom('operator_sessions')
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', now),
        eb('last_used_at', '<=', now - idleSeconds),
        eb('operator_key_id', 'in', eb.selectFrom('operator_keys').select('id').where('revoked_at', 'is not', null)),
      ]),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
