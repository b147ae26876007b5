import { inTransaction, type Store } from '../store/db.ts';
import * as repo from '../store/repositories/operators.ts';
import * as sessions from '../store/repositories/sessions.ts';
import { SESSION_IDLE_SECONDS } from './credentials.ts';
import type { Clock } from '../lib/time.ts';
import { generateToken } from './accounts.ts';
import { auditFilter } from './audit.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import type { Principal } from './principal.ts';
import { hashToken } from './tokens.ts';
import { canonicalInteger, characterLength, isBlank, toId } from './validation.ts';

/**
 * The operator (docs/API.md §16.4): the person who runs msgsvc and manages every account over
 * `/admin/v1/…`. Operator keys are made, listed and revoked with `msgsvc operators …`; a key's
 * secret is shown once and only its SHA-256 hash is kept (`operator_keys`). An operator key opens
 * `/admin/v1` only: it is no account's key, so `/v1` answers it 401, as it answers an account's key
 * or a console cookie on `/admin/v1`.
 */

export type OperatorKeyRow = repo.OperatorKeyRow;

/** The longest operator key Name, in characters (as an account key's). */
export const OPERATOR_NAME_MAX = 64;

/**
 * Makes an operator key named `name` (1 to 64 characters, trimmed).
 * @returns the key and its secret, shown this once.
 * @throws ValidationFailedError `Name cannot be blank.`, `Name should contain at most 64 characters.`
 */
export async function createOperatorKey(
  deps: { store: Store; clock: Clock },
  name: string,
): Promise<{ row: OperatorKeyRow; secret: string }> {
  const trimmed = name.trim();
  if (isBlank(trimmed)) throw new ValidationFailedError([{ field: 'Name', message: 'Name cannot be blank.' }]);
  if (characterLength(trimmed) > OPERATOR_NAME_MAX || trimmed.includes('\u0000'))
    throw new ValidationFailedError([{ field: 'Name', message: `Name should contain at most ${OPERATOR_NAME_MAX} characters.` }]);
  const secret = generateToken();
  const now = deps.clock.nowSeconds();
  const row = await inTransaction(deps.store, async (tx) => {
    const id = await repo.insertOperatorKey(tx, { name: trimmed, hash: hashToken(secret), prefix: secret.slice(0, 8), now });
    return (await repo.findOperatorKey(tx, id))!;
  });
  return { row, secret };
}

/** Every operator key, revoked ones included, by id (never a secret or a hash). */
export function listOperatorKeys(store: Store): Promise<OperatorKeyRow[]> {
  return repo.listOperatorKeys(store.db);
}

/**
 * Revokes the operator key `id`: it stops working at once, on every instance (operator keys are
 * never cached). @returns false when there is no live key with that id.
 */
export async function revokeOperatorKey(deps: { store: Store; clock: Clock }, id: number): Promise<boolean> {
  return (await repo.revokeOperatorKey(deps.store.db, id, deps.clock.nowSeconds())) > 0;
}

/** A live operator key as the authenticator sees it. */
export interface ResolvedOperator {
  readonly principal: Principal;
  readonly operatorId: number;
  /** The stored hash the secret matched (lowercase hex), for the constant-time confirmation. */
  readonly storedHash: string;
  /** Its last use recorded (epoch seconds, 0: never). */
  readonly lastUsedAt: number;
}

/**
 * The principal of an operator key: no account (`accountId` 0), every scope (`*`, so that the keys
 * and users it makes inside an account may hold anything, docs/API.md §15.2), `operatorId`, and
 * the audit log's Actor `operator:{Id}:{Name}`.
 */
export function operatorPrincipal(key: { id: number; name: string }): Principal {
  return { accountId: 0, scopes: ['*'], operatorId: key.id, actor: `operator:${key.id}:${key.name}` };
}

/** The live operator key whose secret hashes to `hash`, or undefined (unknown or revoked). */
export async function resolveOperatorKey(store: Store, hash: string): Promise<ResolvedOperator | undefined> {
  const row = await repo.findLiveOperatorKey(store.db, hash);
  if (!row) return undefined;
  return { principal: operatorPrincipal(row), operatorId: row.id, storedHash: row.token_hash, lastUsedAt: row.last_used_at ?? 0 };
}

/**
 * The operator signed in to the console (API.md §16.4): the principal of the operator key, with
 * the session and its CSRF token, or undefined (unknown cookie, key revoked, past 7 days or idle
 * past 12 hours, as an account's session).
 * @param now epoch seconds.
 */
export async function resolveOperatorSession(store: Store, hash: string, now: number): Promise<Principal | undefined> {
  const s = await sessions.findOperatorSession(store.db, hash);
  if (!s || s.expires_at <= now || s.last_used_at + SESSION_IDLE_SECONDS <= now) return undefined;
  // The sliding idle limit, kept to the minute.
  if (now - s.last_used_at >= LAST_USE_PRECISION_SECONDS) await sessions.touchOperatorSession(store.db, s.id, now);
  return { ...operatorPrincipal({ id: s.operator_key_id, name: s.operator_name }), sessionId: s.id, csrf: s.csrf_token };
}

/** How often at most an operator key's last use is written, in seconds (as an account key's). */
const LAST_USE_PRECISION_SECONDS = 60;

/** Records an operator key's use, at most once a minute; a failed write is reported to `onError`. */
export function recordOperatorKeyUse(store: Store, key: ResolvedOperator, now: number, onError: (err: unknown) => void): void {
  if (now - key.lastUsedAt < LAST_USE_PRECISION_SECONDS) return;
  repo.touchOperatorKey(store.db, key.operatorId, now).catch(onError);
}

/** What one configured carrier did in a time range, from the message log (every instance). */
export interface CarrierActivity {
  submitted: number;
  failed: number;
}

/**
 * Per carrier name: the outbound messages it accepted at or after `since` (epoch seconds), and how
 * many of those then ended Undelivered or Failed. Counted in the database, so every instance that
 * shares it gives the same answer.
 */
export async function carrierActivity(store: Store, since: number): Promise<ReadonlyMap<string, CarrierActivity>> {
  const rows = await repo.carrierActivity(store.db, since);
  return new Map(rows.map((r) => [r.carrier, { submitted: r.submitted, failed: r.failed }]));
}

export type AllAuditFilter = repo.AllAuditFilter;
export type AllAuditRow = Awaited<ReturnType<typeof repo.listAllAudit>>[number];

/** The largest row id either store keeps (PostgreSQL `integer`). */
const MAX_ROW_ID = 2_147_483_647;

/**
 * The filters of the operator's `audit/index`: those of `/v1/audit/index` (`Actor`, `Operation`,
 * `from`, `to`) and `AccountId`. Null when no entry can match (an AccountId that names no row).
 * @throws ValidationFailedError `The format of From is invalid.`, `… To …`, `Account Id must be an integer.`
 */
export function operatorAuditFilter(query: (name: string) => string | string[] | undefined, timeZone: string): AllAuditFilter | null {
  const errors: FieldError[] = [];
  let filter: AllAuditFilter = {};
  try {
    filter = auditFilter(query, timeZone);
  } catch (err) {
    if (!(err instanceof ValidationFailedError)) throw err;
    errors.push(...err.errors);
  }
  let none = false;
  const account = query('AccountId');
  if (account !== undefined && account !== '') {
    const canonical = typeof account === 'string' ? canonicalInteger(account) : null;
    if (canonical === null) errors.push({ field: 'AccountId', message: 'Account Id must be an integer.' });
    else {
      const id = toId(canonical);
      if (id === null || id > MAX_ROW_ID) none = true;
      else filter.accountId = id;
    }
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return none ? null : filter;
}

export async function countAllAudit(store: Store, f: AllAuditFilter | null): Promise<number> {
  return f === null ? 0 : repo.countAllAudit(store.db, f);
}

/** A page of every account's audit entries (or one account's), newest first. */
export async function listAllAudit(store: Store, f: AllAuditFilter | null, limit: number, offset: number): Promise<AllAuditRow[]> {
  return f === null ? [] : repo.listAllAudit(store.db, f, limit, offset);
}
