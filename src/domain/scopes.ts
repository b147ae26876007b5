/**
 * Scopes and roles (docs/API.md §15.1, §15.3).
 *
 * Every `/v1` operation has one scope, `{resource}:read` for GET and HEAD and `{resource}:write`
 * for the other methods; `write` includes `read`, and `*` is every scope. A credential holds a
 * list of scopes: a key its `Scopes`, a person the scopes of their role.
 */

/** The resources of §15.1, in the order the docs list them. */
export const RESOURCES = [
  'numbers',
  'credits',
  'sms',
  'contacts',
  'groups',
  'fields',
  'keywords',
  'media',
  'webhooks',
  'account',
  'keys',
  'users',
  'audit',
  'subaccounts',
] as const;
export type Resource = (typeof RESOURCES)[number];

/** A scope a credential may hold: `*`, or `{resource}:read` / `{resource}:write`. */
export type Scope = '*' | `${Resource}:${'read' | 'write'}`;

/** Every scope there is, `*` first (the order keys/create's check and the docs use). */
export const ALL_SCOPES: readonly Scope[] = ['*', ...RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`] as Scope[])];
const KNOWN: ReadonlySet<string> = new Set(ALL_SCOPES);

/** True when `text` is a scope of §15.1. */
export function isScope(text: unknown): text is Scope {
  return typeof text === 'string' && KNOWN.has(text);
}

/** The scope an operation on `resource` with one of `methods` needs: read for GET/HEAD alone, else write. */
export function scopeOf(resource: Resource, methods: readonly string[]): Scope {
  return methods.every((m) => m === 'GET' || m === 'HEAD') ? `${resource}:read` : `${resource}:write`;
}

/** True when `held` grants `needed` (`*` grants everything; `x:write` grants `x:read`). */
export function grants(held: readonly string[], needed: Scope): boolean {
  for (const s of held) {
    if (s === '*' || s === needed) return true;
    if (needed.endsWith(':read') && s === `${needed.slice(0, -5)}:write`) return true;
  }
  return false;
}

/** True when every scope of `wanted` is granted by `held` (a key cannot give what its maker lacks). */
export function grantsAll(held: readonly string[], wanted: readonly Scope[]): boolean {
  if (held.includes('*')) return true;
  return wanted.every((w) => w !== '*' && grants(held, w));
}

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const VIEWER: readonly Scope[] = RESOURCES.filter((r) => r !== 'keys' && r !== 'users' && r !== 'audit').map((r) => `${r}:read` as Scope);
const MEMBER_WRITES: readonly Resource[] = ['sms', 'contacts', 'groups', 'fields', 'keywords', 'media'];
const MEMBER: readonly Scope[] = VIEWER.map((s) => {
  const r = s.slice(0, -5) as Resource;
  return MEMBER_WRITES.includes(r) ? (`${r}:write` as Scope) : s;
});

/**
 * The scopes of a role (§15.3): `viewer` every read but keys, users and audit; `member` adds write
 * on sms, contacts, groups, fields, keywords and media; `admin` and `owner` `*`.
 */
export function roleScopes(role: string): readonly Scope[] {
  switch (role) {
    case 'owner':
    case 'admin':
      return ['*'];
    case 'member':
      return MEMBER;
    case 'viewer':
      return VIEWER;
    default:
      return [];
  }
}
