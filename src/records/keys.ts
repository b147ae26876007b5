import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, NullableStr, Str } from './common.ts';

/** A stored key (a row of `api_tokens`). */
export type KeyRow = Row<'api_tokens'>;

function jsonList(text: string): string[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** API.md §15.2 Key record, fields in its order. */
export const KeyRecordSchema = Type.Object({
  Id: Int(),
  Name: Str(),
  Prefix: Str(),
  Scopes: Type.Array(Str()),
  AllowedIps: Type.Array(Str()),
  DateExpires: NullableStr(),
  DateLastUsed: NullableStr(),
  LastIp: Str(),
  DateCreated: Str(),
  DateUpdated: Str(),
});
export type KeyRecord = Static<typeof KeyRecordSchema>;

/** The reply to keys/create and keys/roll alone: the record plus `Secret`, shown this once. */
export const KeyWithSecretRecordSchema = Type.Object({ ...KeyRecordSchema.properties, Secret: Str() });

/** The body of keys/create and keys/update (API.md §15.2). */
export const KeyBodySchema = Type.Object({
  Name: Type.Optional(Type.String({ description: '1 to 64 characters (required on create)' })),
  Scopes: Type.Optional(
    Type.Array(Type.String(), { description: 'scopes such as `contacts:read`; default `["*"]`; none beyond the caller\'s own' }),
  ),
  AllowedIps: Type.Optional(Type.Array(Type.String(), { description: 'IPv4/IPv6 addresses or CIDR ranges; `[]` is any' })),
  DateExpires: Type.Optional(
    Type.Unsafe<string | null>({
      type: ['string', 'null'],
      description: '`YYYY-MM-DD HH:MM:SS` in the service time zone, in the future; null: never',
    }),
  ),
});

/** The body of keys/roll. */
export const KeyRollBodySchema = Type.Object({
  GraceSeconds: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 604800, description: 'how long the old secret keeps working (default 86400)' }),
  ),
});

/** Maps a stored key to its Key record (API.md §15.2), times in the configured zone. */
export const keyRecord =
  (time: TimeFormat) =>
  (r: KeyRow): KeyRecord => ({
    Id: r.id,
    Name: r.name,
    Prefix: r.prefix,
    Scopes: jsonList(r.scopes),
    AllowedIps: jsonList(r.allowed_ips),
    DateExpires: r.expires_at === null ? null : time.dateTime(Number(r.expires_at)),
    DateLastUsed: r.last_used_at === null ? null : time.dateTime(Number(r.last_used_at)),
    LastIp: r.last_ip,
    DateCreated: time.dateTime(Number(r.created_at)),
    DateUpdated: time.dateTime(Number(r.updated_at)),
  });
