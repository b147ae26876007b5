import ipaddr from 'ipaddr.js';
import { inTransaction, type Store } from '../store/db.ts';
import * as repo from '../store/repositories/keys.ts';
import { noteCredentialChange } from '../store/repositories/accounts.ts';
import type { Clock } from '../lib/time.ts';
import { generateToken } from './accounts.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { loadOr404 } from './find.ts';
import type { Principal } from './principal.ts';
import { parseScheduleDateTime } from './schedule-time.ts';
import { grantsAll, isScope, type Scope } from './scopes.ts';
import { hashToken } from './tokens.ts';
import { defineRules, isEmpty, messages, validate, type Input } from './validation.ts';

/**
 * Keys (docs/API.md §15.2): an account's access tokens, each with a name, scopes, allowed
 * addresses, an expiry and its last use. Only a secret's SHA-256 hash is kept; the secret is
 * shown once, in the reply to `create` and to `roll`.
 */

export interface KeyDeps {
  store: Store;
  clock: Clock;
  /** The service's time zone (MSGSVC_TIMEZONE): DateExpires is wall-clock time there. */
  timeZone: string;
}

export type { KeyRow } from '../store/repositories/keys.ts';

/** The longest grace a roll may give, in seconds (7 days). */
export const MAX_GRACE_SECONDS = 604_800;
/** The grace a roll gives when none is sent, in seconds (24 hours). */
export const DEFAULT_GRACE_SECONDS = 86_400;

/** The list of a list field as sent: a JSON array, or a form's `Name[]=…` (an object of values); else undefined. */
function listOf(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value as unknown[];
  if (typeof value === 'object' && value !== null) return Object.values(value as Record<string, unknown>);
  return undefined;
}

/** A JSON array of scopes, or undefined when `value` is not a list of known scopes (deduplicated, in order). */
function readScopes(value: unknown): Scope[] | undefined {
  const list = listOf(value);
  if (list === undefined || list.length === 0) return undefined;
  const out: Scope[] = [];
  for (const s of list) {
    if (!isScope(s)) return undefined;
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** True when `text` is an IPv4 or IPv6 address, or a CIDR range of either. */
export function isAddressOrRange(text: unknown): text is string {
  if (typeof text !== 'string' || text === '' || text.length > 64) return false;
  if (text.includes('/')) return ipaddr.isValidCIDR(text);
  return ipaddr.isValid(text) && (ipaddr.IPv4.isValidFourPartDecimal(text) || ipaddr.IPv6.isValid(text));
}

function readAddresses(value: unknown): string[] | undefined {
  const list = listOf(value);
  if (list === undefined) return typeof value === 'string' && value === '' ? [] : undefined;
  const out: string[] = [];
  for (const a of list) {
    if (!isAddressOrRange(a)) return undefined;
    if (!out.includes(a)) out.push(a);
  }
  return out;
}

/**
 * A matcher of the addresses a key allows: true for any address when the list is empty.
 * IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`, as Node reports IPv4 peers on a dual-stack
 * socket) are compared as the IPv4 address they carry.
 */
export function addressMatcher(allowed: readonly string[]): (ip: string) => boolean {
  if (allowed.length === 0) return () => true;
  const ranges = allowed.map((a) =>
    a.includes('/') ? ipaddr.parseCIDR(a) : ([ipaddr.parse(a), ipaddr.parse(a).kind() === 'ipv4' ? 32 : 128] as const),
  );
  return (ip: string) => {
    let addr: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      addr = ipaddr.process(ip);
    } catch {
      return false;
    }
    return ranges.some(([base, bits]) => {
      let b = base;
      if (b.kind() === 'ipv6' && (b as ipaddr.IPv6).isIPv4MappedAddress()) b = (b as ipaddr.IPv6).toIPv4Address();
      if (b.kind() !== addr.kind()) return false;
      const baseBits = b === base ? bits : bits - 96;
      return addr.match(b, baseBits);
    });
  };
}

const RULES = defineRules([
  { field: 'Name', rule: 'required' },
  { field: 'Name', rule: 'string', min: 1, max: 64 },
]);

interface KeyFields {
  name?: string;
  scopes?: Scope[];
  allowedIps?: string[];
  /** Epoch seconds, or null for never; undefined when not sent. */
  expiresAt?: number | null;
}

/** Reads and checks a key's fields (create or update); throws the 422 of every failed field. */
function readKeyFields(deps: KeyDeps, principal: Principal, input: Input, mode: 'create' | 'update'): KeyFields {
  const sent = (f: string) => Object.hasOwn(input, f);
  const rules = mode === 'create' ? RULES : RULES.filter((r) => r.rule !== 'required' || sent(r.field));
  // Name as sent, never trimmed (API.md §4.4: a name of spaces is blank, a no-break space is not,
  // and the length counts every character).
  const checked = validate(input, rules);
  const errors: FieldError[] = [...checked.errors];
  const out: KeyFields = {};
  if (!checked.failed('Name') && checked.values.Name !== undefined) out.name = checked.values.Name;
  if (sent('Scopes') || mode === 'create') {
    const scopes = sent('Scopes') ? readScopes(input.Scopes) : (['*'] as Scope[]);
    // A key cannot give what its maker lacks (and an unknown scope is no scope).
    // A sub-account's key can never reach subaccounts (API.md §16.1): naming that scope is a mistake.
    const beyond = principal.parentId !== undefined && scopes?.some((sc) => sc.startsWith('subaccounts:'));
    if (scopes === undefined || beyond || !grantsAll(principal.scopes, scopes))
      errors.push({ field: 'Scopes', message: messages.invalid('Scopes') });
    else out.scopes = scopes;
  }
  if (sent('AllowedIps')) {
    const ips = input.AllowedIps === null ? [] : readAddresses(input.AllowedIps);
    if (ips === undefined) errors.push({ field: 'AllowedIps', message: messages.invalid('AllowedIps') });
    else out.allowedIps = ips;
  }
  if (sent('DateExpires')) {
    if (input.DateExpires === null || isEmpty(input.DateExpires)) out.expiresAt = null;
    else {
      const ms = parseScheduleDateTime(input.DateExpires, deps.timeZone);
      if (ms === null) errors.push({ field: 'DateExpires', message: 'The format of Date Expires is invalid.' });
      else if (ms <= deps.clock.nowMs()) errors.push({ field: 'DateExpires', message: messages.invalid('DateExpires') });
      else out.expiresAt = Math.floor(ms / 1000);
    }
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return out;
}

/** A new secret and what is kept of it. */
function newSecret(): { secret: string; hash: string; prefix: string } {
  const secret = generateToken();
  return { secret, hash: hashToken(secret), prefix: secret.slice(0, 8) };
}

export function countKeys(deps: KeyDeps, accountId: number): Promise<number> {
  return repo.countKeys(deps.store.db, accountId);
}

export function listKeys(deps: KeyDeps, accountId: number, limit: number, offset: number): Promise<repo.KeyRow[]> {
  return repo.listKeys(deps.store.db, accountId, limit, offset);
}

/** @throws NotFoundError `Object not found: {id}` when the account has no such live key. */
export function viewKey(deps: KeyDeps, accountId: number, id: string): Promise<repo.KeyRow> {
  return loadOr404(id, (n) => repo.findKey(deps.store.db, accountId, n));
}

/**
 * `keys/create`: a new key; the reply alone shows its secret.
 * @throws ValidationFailedError `Name cannot be blank.`, `Scopes is invalid.` (unknown, or beyond
 *   the caller's own), `Allowed Ips is invalid.`, `Date Expires is invalid.` (past).
 */
export async function createKey(deps: KeyDeps, principal: Principal, input: Input): Promise<{ row: repo.KeyRow; secret: string }> {
  const f = readKeyFields(deps, principal, input, 'create');
  const { secret, hash, prefix } = newSecret();
  const now = deps.clock.nowSeconds();
  const row = await inTransaction(deps.store, async (tx) => {
    const id = await repo.insertKey(tx, {
      accountId: principal.accountId,
      hash,
      prefix,
      name: f.name!,
      scopes: JSON.stringify(f.scopes ?? ['*']),
      allowedIps: JSON.stringify(f.allowedIps ?? []),
      expiresAt: f.expiresAt ?? null,
      now,
    });
    return (await repo.findKey(tx, principal.accountId, id))!;
  });
  return { row, secret };
}

/** `keys/update?id=`: Name, Scopes, AllowedIps, DateExpires; only the fields sent change. */
export async function updateKey(deps: KeyDeps, principal: Principal, id: string, input: Input): Promise<repo.KeyRow> {
  const existing = await viewKey(deps, principal.accountId, id);
  const f = readKeyFields(deps, principal, input, 'update');
  const now = deps.clock.nowSeconds();
  const row = await inTransaction(deps.store, async (tx) => {
    await repo.updateKey(
      tx,
      principal.accountId,
      existing.id,
      {
        ...(f.name !== undefined ? { name: f.name } : {}),
        ...(f.scopes !== undefined ? { scopes: JSON.stringify(f.scopes) } : {}),
        ...(f.allowedIps !== undefined ? { allowed_ips: JSON.stringify(f.allowedIps) } : {}),
        ...(f.expiresAt !== undefined ? { expires_at: f.expiresAt } : {}),
      },
      now,
    );
    return (await repo.findKey(tx, principal.accountId, existing.id))!;
  });
  noteCredentialChange();
  return row;
}

/**
 * `keys/roll?id=` (POST, `GraceSeconds` 0 to 604800, default 86400): a new secret; the old one
 * keeps working for the grace, then stops. A second roll ends the first one's old secret at once.
 * @throws ValidationFailedError `Scopes is invalid.` when the key holds a scope the caller lacks.
 */
export async function rollKey(
  deps: KeyDeps,
  principal: Principal,
  id: string,
  input: Input,
): Promise<{ row: repo.KeyRow; secret: string }> {
  const existing = await viewKey(deps, principal.accountId, id);
  // A roll hands the caller the key's new secret, and so its scopes: a key cannot give what its
  // maker lacks (docs/API.md §15.2), so a key beyond the caller's own scopes is `Scopes is invalid.`
  if (!grantsAll(principal.scopes, keyLists(existing).scopes as Scope[]))
    throw new ValidationFailedError([{ field: 'Scopes', message: messages.invalid('Scopes') }]);
  const checked = validate(input, defineRules([{ field: 'GraceSeconds', rule: 'integer', min: 0, max: MAX_GRACE_SECONDS }]));
  if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
  const grace = checked.values.GraceSeconds ?? DEFAULT_GRACE_SECONDS;
  const { secret, hash, prefix } = newSecret();
  const now = deps.clock.nowSeconds();
  const row = await inTransaction(deps.store, async (tx) => {
    await repo.rollKey(tx, principal.accountId, existing.id, hash, prefix, now + grace, now);
    return (await repo.findKey(tx, principal.accountId, existing.id))!;
  });
  noteCredentialChange();
  return { row, secret };
}

/** `keys/delete?id=`: the key stops at once, on every instance (docs/API.md §15.2). */
export async function deleteKey(deps: KeyDeps, accountId: number, id: string): Promise<void> {
  const existing = await viewKey(deps, accountId, id);
  await inTransaction(deps.store, (tx) => repo.revokeKey(tx, accountId, existing.id, deps.clock.nowSeconds()));
  noteCredentialChange();
}

/** The parsed lists of a key row (JSON text, read leniently). */
export function keyLists(row: Pick<repo.KeyRow, 'scopes' | 'allowed_ips'>): { scopes: string[]; allowedIps: string[] } {
  const parse = (text: string): string[] => {
    try {
      const v = JSON.parse(text) as unknown;
      return Array.isArray(v) ? v.map(String) : [];
    } catch {
      return [];
    }
  };
  return { scopes: parse(row.scopes), allowedIps: parse(row.allowed_ips) };
}
