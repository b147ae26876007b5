import type { Role } from './scopes.ts';

/**
 * Who a request acts as (docs/API.md §15): a key (by `access_token`, `Authorization: Bearer` or a
 * console session signed in with a key), a person (a console session), or on `/admin/v1` the
 * operator (an operator key, docs/API.md §16.4). Set by the
 * authentication step; every operation's handler reads it through its context.
 */
export interface Principal {
  readonly accountId: number;
  /** The scopes held: a key's `Scopes`, or the scopes of a person's role. */
  readonly scopes: readonly string[];
  /** The key acted as, if any. */
  readonly keyId?: number;
  /** The person acted as, if any, with their role. */
  readonly userId?: number;
  readonly role?: Role;
  /** The console session the request came with (cookie), if any. */
  readonly sessionId?: number;
  /** The session's CSRF token: present exactly when the request was authenticated by the cookie. */
  readonly csrf?: string;
  /** The account's parent when it is a sub-account (API.md §16): its `*` excludes `subaccounts`. */
  readonly parentId?: number;
  /** True while the account is suspended (API.md §16): every write is refused with 403. */
  readonly suspended?: boolean;
  /**
   * The operator key acted as (API.md §16.4): set only on `/admin/v1`, where `accountId` is 0 (an
   * operator belongs to no account) and `scopes` is `*`. No `/v1` credential ever carries it.
   */
  readonly operatorId?: number;
  /** The audit log's Actor: `key:{Id}:{Name}`, `user:{Id}:{Email}` or `operator:{Id}:{Name}`. */
  readonly actor: string;
}

/** The principal of no one (before authentication). */
export const NOBODY: Principal = { accountId: 0, scopes: [], actor: 'system' };

/**
 * True when the principal may make and unmake owners (docs/API.md §15.3): a person whose role is
 * `owner`, or a key holding `*` (the account's own credential, which is how the first owner is
 * invited). Decision recorded in docs/API.md §15.3.
 */
export function actsAsOwner(p: Principal): boolean {
  if (p.userId !== undefined) return p.role === 'owner';
  return p.scopes.includes('*');
}
