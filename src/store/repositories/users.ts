import { boundCount } from '../prepared.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/** People (docs/API.md §15.3), their recovery codes, passkeys, and the sign-in failures of the lockout. */

export type UserRow = Row<'users'>;

export async function countUsers(db: Db, accountId: number): Promise<number> {
  const r = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function listUsers(db: Db, accountId: number, limit: number, offset: number): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset))
    .execute();
}

export async function findUser(db: Db, accountId: number, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

export async function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The person with this address in any account (addresses are unique in the whole service, without case). */
export async function findUserByEmail(db: Db, emailKey: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email_key', '=', emailKey).executeTakeFirst();
}

export async function findUserByInvite(db: Db, inviteHash: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('invite_hash', '=', inviteHash).executeTakeFirst();
}

export async function countOwners(db: Db, accountId: number): Promise<number> {
  const r = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export interface NewUser {
  accountId: number;
  email: string;
  name: string;
  role: string;
  inviteHash: string;
  inviteExpiresAt: number;
  now: number;
}

export async function insertUser(db: Db, u: NewUser): Promise<number> {
  const { id } = await db
    .insertInto('users')
    .values({
      account_id: u.accountId,
      email: u.email,
      email_key: u.email.toLowerCase(),
      name: u.name,
      role: u.role,
      invite_hash: u.inviteHash,
      invite_expires_at: u.inviteExpiresAt,
      created_at: u.now,
      updated_at: u.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

type UserSet = Partial<
  Pick<
    UserRow,
    | 'name'
    | 'role'
    | 'password_hash'
    | 'invite_hash'
    | 'invite_expires_at'
    | 'totp_secret'
    | 'totp_pending'
    | 'totp_last_step'
    | 'two_factor'
    | 'last_sign_in_at'
  >
>;

export async function updateUser(db: Db, id: number, set: UserSet, now: number | undefined): Promise<void> {
  await db
    .updateTable('users')
    .set({ ...set, ...(now !== undefined ? { updated_at: now } : {}) })
    .where('id', '=', id)
    .execute();
}

export async function deleteUser(db: Db, accountId: number, id: number): Promise<void> {
  await db.deleteFrom('users').where('account_id', '=', accountId).where('id', '=', id).execute();
}

export async function replaceRecoveryCodes(db: Db, userId: number, hashes: readonly string[]): Promise<void> {
  await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
  if (hashes.length > 0)
    await db
      .insertInto('user_recovery_codes')
      .values(hashes.map((h) => ({ user_id: userId, code_hash: h })))
      .execute();
}

/** Uses an unused recovery code; true when one was found (and is now used). */
export async function useRecoveryCode(db: Db, userId: number, hash: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('user_recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

// ------------------------------------------------------------------ lockout

export async function addFailure(db: Db, subject: string, at: number): Promise<void> {
  await db.insertInto('sign_in_failures').values({ subject, at }).execute();
}

/** The times of `subject`'s failures since `since`, newest first. */
export async function failuresSince(db: Db, subject: string, since: number): Promise<number[]> {
  const rows = await db
    .selectFrom('sign_in_failures')
    .select('at')
    .where('subject', '=', subject)
    .where('at', '>', since)
    .orderBy('at', 'desc')
    .limit(boundCount(100))
    .execute();
  return rows.map((r) => Number(r.at));
}

export async function clearFailures(db: Db, subject: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('subject', '=', subject).execute();
}

export async function purgeFailures(db: Db, before: number): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('at', '<=', before).execute();
}

// ------------------------------------------------------------------ passkeys

export type PasskeyRow = Row<'passkeys'>;

export async function listPasskeys(db: Db, userId: number): Promise<PasskeyRow[]> {
  return db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}

export async function findPasskey(db: Db, credentialId: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

export async function insertPasskey(
  db: Db,
  p: { userId: number; credentialId: string; publicKey: string; counter: number; transports: string; name: string; now: number },
): Promise<number> {
  const { id } = await db
    .insertInto('passkeys')
    .values({
      user_id: p.userId,
      credential_id: p.credentialId,
      public_key: p.publicKey,
      counter: p.counter,
      transports: p.transports,
      name: p.name,
      created_at: p.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

export async function usePasskey(db: Db, id: number, counter: number, now: number): Promise<void> {
  await db.updateTable('passkeys').set({ counter, last_used_at: now }).where('id', '=', id).execute();
}

/** Removes every passkey of a person (a reset). */
export async function deletePasskeysOf(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('passkeys').where('user_id', '=', userId).execute();
}

export async function deletePasskey(db: Db, userId: number, id: number): Promise<number> {
  const r = await db.deleteFrom('passkeys').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function putChallenge(db: Db, id: string, challenge: string, userId: number | null, expiresAt: number): Promise<void> {
  await db.deleteFrom('webauthn_challenges').where('id', '=', id).execute();
  await db.insertInto('webauthn_challenges').values({ id, challenge, user_id: userId, expires_at: expiresAt }).execute();
}

/** Takes a challenge (it can be answered once); undefined when unknown or expired. */
export async function takeChallenge(db: Db, id: string, now: number): Promise<{ challenge: string; user_id: number | null } | undefined> {
  const row = await db
    .selectFrom('webauthn_challenges')
    .select(['challenge', 'user_id', 'expires_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  await db.deleteFrom('webauthn_challenges').where('id', '=', id).execute();
  if (!row || Number(row.expires_at) <= now) return undefined;
  return { challenge: row.challenge, user_id: row.user_id };
}

export async function purgeChallenges(db: Db, now: number): Promise<void> {
  await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).execute();
}
