import { randomBytes } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { writeAuditEntry as writeEntry } from '../store/audit.ts';
import { inTransaction, type Store } from '../store/db.ts';
import * as accounts from '../store/repositories/accounts.ts';
import * as sessions from '../store/repositories/sessions.ts';
import * as repo from '../store/repositories/users.ts';
import type { Clock } from '../lib/time.ts';
import { resolveKey, SESSION_MAX_SECONDS } from './credentials.ts';
import { resolveOperatorKey } from './operators.ts';
import { HttpStatusError, ValidationFailedError } from './errors.ts';
import { toId } from './validation.ts';
import { hashPassword, passwordErrors, verifyPassword, type UserRow } from './users.ts';
import { hashToken } from './tokens.ts';

/**
 * Signing in and out of the console, invites, two-factor and passkeys (docs/API.md §15.3–15.4).
 * A session is a random 32-byte value in the `msgsvc_session` cookie; only its SHA-256 hash is
 * kept, with a CSRF token the console sends back as `X-CSRF-Token`.
 */

export interface SignInDeps {
  store: Store;
  clock: Clock;
  /** The relying party of passkeys: the host name (RP ID) and the origin the browser reports. */
  rpId: string;
  origin: string;
}

/** Who is asking, for the lockout and the audit log. */
export interface Requester {
  ip: string;
  requestId: string;
}

/** A new session: the cookie's value (shown to the browser only) and what the server knows of it. */
export interface NewSession {
  cookie: string;
  csrf: string;
  /** Seconds the cookie lasts (the 7-day limit). */
  maxAge: number;
}

/** The lockout (§15.3): 5 failures for one email or one IP within 15 minutes. */
export const LOCKOUT_FAILURES = 5;
export const LOCKOUT_WINDOW_SECONDS = 15 * 60;

const INCORRECT = [{ field: 'Password', message: 'Incorrect email or password.' }];

// A hash to verify against when the email is unknown, so that both answers take the same time.
let dummyHash: Promise<string> | undefined;
function dummy(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return dummyHash;
}

/** Seconds until `subject` may try again (0: not locked). */
async function lockedFor(store: Store, subject: string, now: number): Promise<number> {
  const times = await repo.failuresSince(store.db, subject, now - LOCKOUT_WINDOW_SECONDS);
  if (times.length < LOCKOUT_FAILURES) return 0;
  // Locked until the failure that made it 5 leaves the window.
  return Math.max(1, times[LOCKOUT_FAILURES - 1]! + LOCKOUT_WINDOW_SECONDS - now);
}

async function checkLockout(store: Store, subjects: readonly string[], now: number): Promise<void> {
  let wait = 0;
  for (const s of subjects) wait = Math.max(wait, await lockedFor(store, s, now));
  if (wait > 0) throw new HttpStatusError(429, 'Rate limit exceeded.', { 'Retry-After': String(wait) });
}

function emailSubject(email: string): string {
  return `email:${email.toLowerCase()}`;
}

async function recordFailure(
  deps: SignInDeps,
  who: Requester,
  email: string | undefined,
  user: UserRow | undefined,
  now: number,
): Promise<void> {
  await inTransaction(deps.store, async (tx) => {
    await repo.addFailure(tx, `ip:${who.ip}`, now);
    if (email !== undefined) await repo.addFailure(tx, emailSubject(email), now);
    // A failed sign-in of an email that exists is in that account's audit log (§15.5).
    if (user) await writeEntry(tx, auditOf(user.account_id, `user:${user.id}:${user.email}`, who, 'session.create', 422, now));
  });
}

function auditOf(accountId: number, actor: string, who: Requester, operation: string, status: number, at: number) {
  return { accountId, actor, ip: who.ip, operation, objectId: '', status, requestId: who.requestId, at };
}

async function openSession(
  deps: SignInDeps,
  who: Requester,
  accountId: number,
  as: { userId: number; actor: string } | { keyId: number; actor: string },
): Promise<NewSession> {
  const now = deps.clock.nowSeconds();
  const cookie = randomBytes(32).toString('base64url');
  const csrf = randomBytes(24).toString('base64url');
  await inTransaction(deps.store, async (tx) => {
    const id = await sessions.insertSession(tx, {
      hash: hashToken(cookie),
      csrf,
      accountId,
      userId: 'userId' in as ? as.userId : null,
      keyId: 'keyId' in as ? as.keyId : null,
      now,
      expiresAt: now + SESSION_MAX_SECONDS,
    });
    if ('userId' in as) await repo.updateUser(tx, as.userId, { last_sign_in_at: now }, undefined);
    await writeEntry(tx, { ...auditOf(accountId, as.actor, who, 'session.create', 204, now), objectId: String(id) });
  });
  return { cookie, csrf, maxAge: SESSION_MAX_SECONDS };
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The TOTP of a secret (RFC 6238: SHA-1, 6 digits, 30 seconds). */
function totp(secret: string, label = ''): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer: 'msgsvc', label, algorithm: 'SHA1', digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(secret) });
}

/**
 * The time step a code is valid at (one step either side), or undefined. A step at or before the
 * last one accepted is refused: a code already used in its window is wrong.
 */
function totpStep(secret: string, code: string, lastStep: number, nowMs: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totp(secret).validate({ token: code, timestamp: nowMs, window: 1 });
  if (delta === null) return undefined;
  const step = Math.floor(nowMs / 30_000) + delta;
  return step > lastStep ? step : undefined;
}

/** A recovery code as shown: 10 characters in two groups (`abcde-fghij`). */
function newRecoveryCode(): string {
  const raw = randomBytes(8).toString('base64url').replace(/[-_]/g, 'x').slice(0, 10).toLowerCase();
  return `${raw.slice(0, 5)}-${raw.slice(5)}`;
}

/** The hash a recovery code is kept as: its 10 letters and digits, in lower case. */
function recoveryHash(code: string): string {
  return hashToken(code.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

/**
 * Checks the second factor of `user` (a TOTP code or a recovery code) and consumes it.
 * @returns an error message, or undefined when it is right.
 */
async function secondFactor(deps: SignInDeps, user: UserRow, code: string): Promise<string | undefined> {
  if (code === '') return 'Code cannot be blank.';
  const nowMs = deps.clock.nowMs();
  if (user.totp_secret !== null) {
    const step = totpStep(user.totp_secret, code, Number(user.totp_last_step), nowMs);
    if (step !== undefined) {
      await repo.updateUser(deps.store.db, user.id, { totp_last_step: step }, undefined);
      return undefined;
    }
  }
  if (
    /^[a-z0-9]{5}-?[a-z0-9]{5}$/i.test(code) &&
    (await repo.useRecoveryCode(deps.store.db, user.id, recoveryHash(code), Math.floor(nowMs / 1000)))
  ) {
    return undefined;
  }
  return 'Code is invalid.';
}

/**
 * `POST /console/api/session` with `Email`, `Password` (and `Code` when two-factor is on).
 * The lockout comes first: 5 failures for the email or the IP within 15 minutes give 429.
 * @throws ValidationFailedError `Incorrect email or password.` (the same, in the same time, for an
 *   unknown email and a wrong password), `Code cannot be blank.`, `Code is invalid.`;
 *   HttpStatusError 429 with Retry-After.
 */
export async function signInWithPassword(deps: SignInDeps, who: Requester, input: Record<string, unknown>): Promise<NewSession> {
  const now = deps.clock.nowSeconds();
  const email = text(input.Email).trim();
  const password = text(input.Password);
  const blank = [
    ...(email === '' ? [{ field: 'Email', message: 'Email cannot be blank.' }] : []),
    ...(password === '' ? [{ field: 'Password', message: 'Password cannot be blank.' }] : []),
  ];
  if (blank.length > 0) throw new ValidationFailedError(blank);
  const user = email.length <= 255 ? await repo.findUserByEmail(deps.store.db, email.toLowerCase()) : undefined;
  try {
    await checkLockout(deps.store, [`ip:${who.ip}`, emailSubject(email)], now);
  } catch (err) {
    // A refused sign-in of an email that exists is in its account's audit log too (429).
    if (user) await writeEntry(deps.store.db, auditOf(user.account_id, `user:${user.id}:${user.email}`, who, 'session.create', 429, now));
    throw err;
  }
  // Unknown email, or no password chosen yet: verify against a dummy hash all the same.
  const stored = user?.password_hash ?? (await dummy());
  const ok = (await verifyPassword(stored, password.slice(0, 4096))) && user !== undefined && user.password_hash !== null;
  if (!ok) {
    await recordFailure(deps, who, email, user, now);
    throw new ValidationFailedError(INCORRECT);
  }
  if (Number(user.two_factor) === 1) {
    const message = await secondFactor(deps, user, text(input.Code).trim());
    if (message !== undefined) {
      if (message !== 'Code cannot be blank.') await recordFailure(deps, who, email, user, now);
      throw new ValidationFailedError([{ field: 'Code', message }]);
    }
  }
  await repo.clearFailures(deps.store.db, emailSubject(email));
  return openSession(deps, who, user.account_id, { userId: user.id, actor: `user:${user.id}:${user.email}` });
}

/**
 * `POST /console/api/session` with `Key`: a session acting as the key, with its scopes; or, with
 * an operator key (API.md §16.4), an operator's session, which opens `/admin/v1` and never `/v1`.
 * @throws ValidationFailedError `Key is invalid.` (unknown, revoked, expired, past its grace, or
 *   not allowed from this address); HttpStatusError 429 under the lockout (by IP).
 */
export async function signInWithKey(deps: SignInDeps, who: Requester, input: Record<string, unknown>): Promise<NewSession> {
  const now = deps.clock.nowSeconds();
  const secret = text(input.Key).trim();
  if (secret === '') throw new ValidationFailedError([{ field: 'Key', message: 'Key cannot be blank.' }]);
  await checkLockout(deps.store, [`ip:${who.ip}`], now);
  const hash = secret.length <= 512 ? hashToken(secret) : undefined;
  const key = hash !== undefined ? await resolveKey(deps.store, hash) : undefined;
  if (key && key.endsAt > now && key.allows(who.ip)) {
    return openSession(deps, who, key.principal.accountId, { keyId: key.keyId, actor: key.principal.actor });
  }
  // No account's key: an operator key opens the operator's pages (API.md §16.4).
  const operator = !key && hash !== undefined ? await resolveOperatorKey(deps.store, hash) : undefined;
  if (operator) return openOperatorSession(deps, operator.operatorId, now);
  await recordFailure(deps, who, undefined, undefined, now);
  throw new ValidationFailedError([{ field: 'Key', message: 'Key is invalid.' }]);
}

/**
 * A session of the operator (API.md §16.4): its own table, since it belongs to no account. It is
 * in no account's audit log (an operator's writes are, in the account they change).
 */
async function openOperatorSession(deps: SignInDeps, operatorKeyId: number, now: number): Promise<NewSession> {
  const cookie = randomBytes(32).toString('base64url');
  const csrf = randomBytes(24).toString('base64url');
  await sessions.insertOperatorSession(deps.store.db, {
    hash: hashToken(cookie),
    csrf,
    operatorKeyId,
    now,
    expiresAt: now + SESSION_MAX_SECONDS,
  });
  return { cookie, csrf, maxAge: SESSION_MAX_SECONDS };
}

/** `DELETE /console/api/session` of an operator's session. */
export async function signOutOperator(deps: Pick<SignInDeps, 'store'>, sessionId: number): Promise<void> {
  await sessions.deleteOperatorSession(deps.store.db, sessionId);
}

/** `DELETE /console/api/session`: the session ends (an audit entry `session.delete`). */
export async function signOut(
  deps: Pick<SignInDeps, 'store' | 'clock'>,
  who: Requester,
  session: { id: number; accountId: number; actor: string },
): Promise<void> {
  const now = deps.clock.nowSeconds();
  await inTransaction(deps.store, async (tx) => {
    await sessions.deleteSession(tx, session.id);
    await writeEntry(tx, { ...auditOf(session.accountId, session.actor, who, 'session.delete', 204, now), objectId: String(session.id) });
  });
}

/**
 * `POST /console/api/invite` with `Code` and `Password`: sets the password (once, within 72
 * hours) and signs in.
 * @throws ValidationFailedError `Code is invalid.` (used, expired or unknown), the password's errors;
 *   HttpStatusError 429 under the lockout (by IP).
 */
export async function acceptInvite(deps: SignInDeps, who: Requester, input: Record<string, unknown>): Promise<NewSession> {
  const now = deps.clock.nowSeconds();
  const code = text(input.Code).trim();
  // Taking an invite is a sign-in (docs/API.md §15.5): the lockout of §15.3 is checked first, for
  // the address, and a wrong code is a failure for the address, as a wrong key is (§15.7: a sign-in
  // that names no email is limited by its address). A missing code is no failure.
  await checkLockout(deps.store, [`ip:${who.ip}`], now);
  const user = code === '' || code.length > 128 ? undefined : await repo.findUserByInvite(deps.store.db, hashToken(code));
  const errors = [];
  const wrongCode = !user || user.invite_expires_at === null || Number(user.invite_expires_at) <= now;
  if (wrongCode) errors.push({ field: 'Code', message: 'Code is invalid.' });
  errors.push(...passwordErrors(input.Password));
  if (errors.length > 0) {
    if (wrongCode && code !== '') await recordFailure(deps, who, undefined, undefined, now);
    throw new ValidationFailedError(errors);
  }
  const hash = await hashPassword(input.Password as string);
  await repo.updateUser(deps.store.db, user!.id, { password_hash: hash, invite_hash: null, invite_expires_at: null }, now);
  accounts.noteCredentialChange();
  return openSession(deps, who, user!.account_id, { userId: user!.id, actor: `user:${user!.id}:${user!.email}` });
}

/** The signed-in person, or 403 for a session acting as a key (these are a person's own settings). */
async function person(deps: Pick<SignInDeps, 'store'>, userId: number | undefined): Promise<UserRow> {
  const user = userId === undefined ? undefined : await repo.findUserById(deps.store.db, userId);
  if (!user) throw new HttpStatusError(403, 'You are not allowed to perform this action.');
  return user;
}

/**
 * `PUT /console/api/password` (`CurrentPassword`, `Password`): changes one's own password.
 * @throws ValidationFailedError `Current Password is invalid.`, the new password's errors.
 */
export async function changePassword(deps: SignInDeps, userId: number | undefined, input: Record<string, unknown>): Promise<void> {
  const user = await person(deps, userId);
  const errors = [];
  if (user.password_hash === null || !(await verifyPassword(user.password_hash, text(input.CurrentPassword))))
    errors.push({ field: 'CurrentPassword', message: 'Current Password is invalid.' });
  errors.push(...passwordErrors(input.Password));
  if (errors.length > 0) throw new ValidationFailedError(errors);
  const hash = await hashPassword(input.Password as string);
  await inTransaction(deps.store, (tx) => repo.updateUser(tx, user.id, { password_hash: hash }, deps.clock.nowSeconds()));
}

/** `POST /console/api/2fa`: a new secret to enrol (`Secret` base32, `Uri` otpauth://). Not on until confirmed. */
export async function beginTwoFactor(deps: SignInDeps, userId: number | undefined): Promise<{ Secret: string; Uri: string }> {
  const user = await person(deps, userId);
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  await inTransaction(deps.store, (tx) => repo.updateUser(tx, user.id, { totp_pending: secret }, undefined));
  return { Secret: secret, Uri: totp(secret, user.email).toString() };
}

/**
 * `POST /console/api/2fa/confirm` with a current `Code`: two-factor on, and 10 recovery codes
 * shown this once (only their hashes are kept).
 * @throws ValidationFailedError `Code is invalid.` (wrong, or no enrolment begun).
 */
export async function confirmTwoFactor(
  deps: SignInDeps,
  userId: number | undefined,
  input: Record<string, unknown>,
): Promise<{ RecoveryCodes: string[] }> {
  const user = await person(deps, userId);
  const code = text(input.Code).trim();
  if (code === '') throw new ValidationFailedError([{ field: 'Code', message: 'Code cannot be blank.' }]);
  const step = user.totp_pending === null ? undefined : totpStep(user.totp_pending, code, Number(user.totp_last_step), deps.clock.nowMs());
  if (step === undefined) throw new ValidationFailedError([{ field: 'Code', message: 'Code is invalid.' }]);
  const codes = Array.from({ length: 10 }, newRecoveryCode);
  await inTransaction(deps.store, async (tx) => {
    await repo.updateUser(
      tx,
      user.id,
      { totp_secret: user.totp_pending, totp_pending: null, totp_last_step: step, two_factor: 1 },
      deps.clock.nowSeconds(),
    );
    await repo.replaceRecoveryCodes(tx, user.id, codes.map(recoveryHash));
  });
  return { RecoveryCodes: codes };
}

/** `DELETE /console/api/2fa` with a current `Code` (or a recovery code): two-factor off. */
export async function disableTwoFactor(deps: SignInDeps, userId: number | undefined, input: Record<string, unknown>): Promise<void> {
  const user = await person(deps, userId);
  if (Number(user.two_factor) !== 1) throw new ValidationFailedError([{ field: 'Code', message: 'Code is invalid.' }]);
  const message = await secondFactor(deps, user, text(input.Code).trim());
  if (message !== undefined) throw new ValidationFailedError([{ field: 'Code', message }]);
  await inTransaction(deps.store, async (tx) => {
    await repo.updateUser(tx, user.id, { totp_secret: null, totp_pending: null, two_factor: 0 }, deps.clock.nowSeconds());
    await repo.replaceRecoveryCodes(tx, user.id, []);
  });
}

// ------------------------------------------------------------------ passkeys

const CHALLENGE_SECONDS = 300;

/** A passkey as the console lists it. */
export interface PasskeyRecord {
  Id: number;
  Name: string;
  DateCreated: number;
  DateLastUsed: number | null;
}

export async function listPasskeys(deps: SignInDeps, userId: number | undefined): Promise<repo.PasskeyRow[]> {
  const user = await person(deps, userId);
  return repo.listPasskeys(deps.store.db, user.id);
}

/** `POST /console/api/passkeys/options`: the options for navigator.credentials.create. */
export async function passkeyRegistrationOptions(deps: SignInDeps, userId: number | undefined): Promise<unknown> {
  const user = await person(deps, userId);
  const existing = await repo.listPasskeys(deps.store.db, user.id);
  const options = await generateRegistrationOptions({
    rpName: 'msgsvc',
    rpID: deps.rpId,
    userName: user.email,
    userDisplayName: user.name || user.email,
    userID: new TextEncoder().encode(`msgsvc-user-${user.id}`),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  await inTransaction(deps.store, (tx) =>
    repo.putChallenge(tx, `reg:${user.id}`, options.challenge, user.id, deps.clock.nowSeconds() + CHALLENGE_SECONDS),
  );
  return options;
}

/**
 * `POST /console/api/passkeys` (`Name`, `Response`): registers the passkey the browser made.
 * @throws ValidationFailedError `Response is invalid.` when it does not verify.
 */
export async function registerPasskey(
  deps: SignInDeps,
  userId: number | undefined,
  input: Record<string, unknown>,
): Promise<repo.PasskeyRow> {
  const user = await person(deps, userId);
  const now = deps.clock.nowSeconds();
  const challenge = await repo.takeChallenge(deps.store.db, `reg:${user.id}`, now);
  const invalid = new ValidationFailedError([{ field: 'Response', message: 'Response is invalid.' }]);
  if (!challenge || typeof input.Response !== 'object' || input.Response === null) throw invalid;
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: input.Response as RegistrationResponseJSON,
      expectedChallenge: challenge.challenge,
      expectedOrigin: deps.origin,
      expectedRPID: deps.rpId,
      requireUserVerification: false,
    });
  } catch {
    throw invalid;
  }
  if (!verified.verified || !verified.registrationInfo) throw invalid;
  const c = verified.registrationInfo.credential;
  const name = text(input.Name).trim().slice(0, 64) || 'Passkey';
  const id = await inTransaction(deps.store, (tx) =>
    repo.insertPasskey(tx, {
      userId: user.id,
      credentialId: c.id,
      publicKey: Buffer.from(c.publicKey).toString('base64url'),
      counter: c.counter,
      transports: JSON.stringify(c.transports ?? []),
      name,
      now,
    }),
  );
  return (await repo.listPasskeys(deps.store.db, user.id)).find((p) => p.id === id)!;
}

export async function deletePasskey(deps: SignInDeps, userId: number | undefined, id: string): Promise<boolean> {
  const user = await person(deps, userId);
  const n = toId(id);
  return n !== null && (await inTransaction(deps.store, (tx) => repo.deletePasskey(tx, user.id, n))) > 0;
}

/** `POST /console/api/passkeys/sign-in`: a challenge for navigator.credentials.get (any passkey of this service). */
export async function passkeySignInOptions(deps: SignInDeps): Promise<{ ChallengeId: string; Options: unknown }> {
  const options = await generateAuthenticationOptions({ rpID: deps.rpId, userVerification: 'preferred' });
  const id = randomBytes(18).toString('base64url');
  await repo.putChallenge(deps.store.db, `auth:${id}`, options.challenge, null, deps.clock.nowSeconds() + CHALLENGE_SECONDS);
  return { ChallengeId: id, Options: options };
}

/**
 * `POST /console/api/session` with `ChallengeId` and `Passkey` (the browser's assertion): signs
 * in as the passkey's person, in place of a password and a code.
 * @throws ValidationFailedError `Passkey is invalid.`; HttpStatusError 429 under the lockout.
 */
export async function signInWithPasskey(deps: SignInDeps, who: Requester, input: Record<string, unknown>): Promise<NewSession> {
  const now = deps.clock.nowSeconds();
  await checkLockout(deps.store, [`ip:${who.ip}`], now);
  const invalid = new ValidationFailedError([{ field: 'Passkey', message: 'Passkey is invalid.' }]);
  const response = input.Passkey as AuthenticationResponseJSON | undefined;
  const challenge = await repo.takeChallenge(deps.store.db, `auth:${text(input.ChallengeId)}`, now);
  const passkey =
    typeof response === 'object' && response !== null && typeof response.id === 'string'
      ? await repo.findPasskey(deps.store.db, response.id)
      : undefined;
  const user = passkey ? await repo.findUserById(deps.store.db, passkey.user_id) : undefined;
  let ok = false;
  if (challenge && passkey && user) {
    try {
      const v = await verifyAuthenticationResponse({
        response: response!,
        expectedChallenge: challenge.challenge,
        expectedOrigin: deps.origin,
        expectedRPID: deps.rpId,
        credential: {
          id: passkey.credential_id,
          publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
          counter: Number(passkey.counter),
          transports: JSON.parse(passkey.transports) as never,
        },
        requireUserVerification: false,
      });
      if (v.verified) {
        ok = true;
        await repo.usePasskey(deps.store.db, passkey.id, v.authenticationInfo.newCounter, now);
      }
    } catch {
      ok = false;
    }
  }
  if (!ok || !user) {
    await recordFailure(deps, who, undefined, user, now);
    throw invalid;
  }
  return openSession(deps, who, user.account_id, { userId: user.id, actor: `user:${user.id}:${user.email}` });
}
