import type { Store } from '../store/db.ts';
import * as keys from '../store/repositories/keys.ts';
import * as sessions from '../store/repositories/sessions.ts';
import { addressMatcher, keyLists } from './keys.ts';
import type { Principal } from './principal.ts';
import { roleScopes, type Role } from './scopes.ts';

/**
 * What a request's credential resolves to (docs/API.md §15): a key found by the hash of its
 * secret, or a console session found by the hash of its cookie. The HTTP authentication step
 * (src/http/plugins/auth.ts) calls these, and caches resolved keys where that stays exact.
 */

/** A key as the authenticator keeps it: who it is, and the checks each use must pass. */
export interface ResolvedKey {
  readonly principal: Principal;
  readonly keyId: number;
  /** Epoch seconds after which the secret stops (DateExpires, or the end of a rolled secret's grace); Infinity: never. */
  readonly endsAt: number;
  /** True when the request's address may use the key (AllowedIps). */
  readonly allows: (ip: string) => boolean;
  /** The last use recorded (epoch seconds, or 0) and from where. */
  lastUsedAt: number;
  lastIp: string;
  /** True when the key's Prefix is still unknown (a token made before keys existed). */
  readonly prefixUnknown: boolean;
  /** True when the secret is the current one (not a rolled one in its grace). */
  readonly current: boolean;
  /** The stored hash the secret matched (lowercase hex), for the constant-time confirmation. */
  readonly storedHash: string;
}

/**
 * The live key whose current or rolled secret hashes to `hash`, with the checks its uses must
 * pass; undefined when there is none. Expiry and addresses are checked by the caller on each use.
 */
export async function resolveKey(store: Store, hash: string): Promise<ResolvedKey | undefined> {
  const found = await keys.findKeyByHash(store.db, hash);
  if (!found || found.row.account_status === 'closed') return undefined;
  const { row, rolled } = found;
  const { scopes, allowedIps } = keyLists(row);
  const expires = row.expires_at === null ? Infinity : Number(row.expires_at);
  const graceEnds = rolled ? Number(row.old_expires_at ?? 0) : Infinity;
  return {
    principal: {
      accountId: row.account_id,
      scopes,
      keyId: row.id,
      actor: `key:${row.id}:${row.name}`,
      ...accountState(row.account_status, row.account_parent_id),
    },
    keyId: row.id,
    endsAt: Math.min(expires, graceEnds),
    allows: addressMatcher(allowedIps),
    lastUsedAt: row.last_used_at === null ? 0 : Number(row.last_used_at),
    lastIp: row.last_ip,
    prefixUnknown: row.prefix === '',
    current: !rolled,
    storedHash: rolled ? row.old_hash! : row.token_hash,
  };
}

/** What a principal carries of its account's state (API.md §16): its parent, and whether it is suspended. */
function accountState(status: string, parentId: number | null): { parentId?: number; suspended?: boolean } {
  return {
    ...(parentId !== null ? { parentId: Number(parentId) } : {}),
    ...(status === 'suspended' ? { suspended: true } : {}),
  };
}

/** How often at most a key's last use is written (docs/API.md §15.2: DateLastUsed is kept to the minute). */
export const LAST_USE_PRECISION_SECONDS = 60;

/**
 * Records a key's use when a minute has passed since the last one recorded, or the address
 * changed; fills in the Prefix of a pre-keys token from its secret. Never throws: a failed write is
 * reported to `onError` and the request goes on.
 */
export function recordKeyUse(
  store: Store,
  key: ResolvedKey,
  secret: string,
  ip: string,
  now: number,
  onError: (err: unknown) => void,
): void {
  if (now - key.lastUsedAt < LAST_USE_PRECISION_SECONDS && key.lastIp === ip && !key.prefixUnknown) return;
  key.lastUsedAt = now;
  key.lastIp = ip;
  keys.touchKey(store.db, key.keyId, now, ip, key.prefixUnknown && key.current ? secret.slice(0, 8) : undefined).catch(onError);
}

/** A session's idle limit and its absolute limit, in seconds (docs/API.md §15.3: 12 hours from last use, 7 days at most). */
export const SESSION_IDLE_SECONDS = 12 * 3600;
export const SESSION_MAX_SECONDS = 7 * 86_400;
/** How often at most a session's last use is written, in seconds. */
const SESSION_TOUCH_SECONDS = 60;

/**
 * The principal of a live console session whose cookie value hashes to `hash`: the person (with
 * their role's scopes now) or the key it was signed in with (that key must still be live and
 * unexpired). Undefined when the session is unknown, idle past 12 hours, past 7 days, or its key
 * has ended.
 */
export async function resolveSession(store: Store, hash: string, now: number, ip: string): Promise<Principal | undefined> {
  const s = await sessions.findSession(store.db, hash);
  if (!s || s.account_status === 'closed') return undefined;
  if (Number(s.expires_at) <= now || Number(s.last_used_at) + SESSION_IDLE_SECONDS <= now) return undefined;
  let principal: Principal;
  if (s.user_id !== null) {
    if (s.user_email === null || s.user_role === null) return undefined;
    principal = {
      accountId: s.account_id,
      scopes: roleScopes(s.user_role),
      userId: s.user_id,
      role: s.user_role as Role,
      sessionId: s.id,
      csrf: s.csrf_token,
      actor: `user:${s.user_id}:${s.user_email}`,
      ...accountState(s.account_status, s.account_parent_id),
    };
  } else if (s.key_id !== null) {
    if (s.key_name === null || s.key_scopes === null) return undefined;
    if (s.key_expires_at !== null && Number(s.key_expires_at) <= now) return undefined;
    const { scopes, allowedIps } = keyLists({ scopes: s.key_scopes, allowed_ips: s.key_allowed_ips ?? '[]' });
    if (!addressMatcher(allowedIps)(ip)) return undefined;
    principal = {
      accountId: s.account_id,
      scopes,
      keyId: s.key_id,
      sessionId: s.id,
      csrf: s.csrf_token,
      actor: `key:${s.key_id}:${s.key_name}`,
      ...accountState(s.account_status, s.account_parent_id),
    };
  } else return undefined;
  if (now - Number(s.last_used_at) >= SESSION_TOUCH_SECONDS) {
    // The sliding idle limit, kept to the minute: written before the request goes on, so that the
    // session's next request sees it (a console's requests are few; a key's uses are not, and
    // theirs are written beside the request, recordKeyUse).
    await sessions.touchSession(store.db, s.id, now);
  }
  return principal;
}
