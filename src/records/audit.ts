import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, Str } from './common.ts';

/** A stored audit entry. */
export type AuditEntryRow = Row<'audit_log'>;

/** API.md §15.5 Audit entry record, fields in its order. */
export const AuditEntryRecordSchema = Type.Object({
  Id: Int(),
  DateCreated: Str(),
  Actor: Str(),
  Ip: Str(),
  Operation: Str(),
  ObjectId: Str(),
  Status: Int(),
  RequestId: Str(),
});
export type AuditEntryRecord = Static<typeof AuditEntryRecordSchema>;

/** The filters of audit/index. */
export const AuditQuery = Type.Object({
  Actor: Type.Optional(Type.String({ description: 'exactly, e.g. `key:3:default` or `user:2:ann@example.com`' })),
  Operation: Type.Optional(Type.String({ description: 'an operationId, e.g. `groups.delete`, or `session.create`' })),
  from: Type.Optional(Type.String({ description: '`YYYY-MM-DD HH:MM:SS` (or a date) in the service time zone, inclusive' })),
  to: Type.Optional(Type.String({ description: '`YYYY-MM-DD HH:MM:SS` (or a date: the whole day) in the service time zone, inclusive' })),
  page: Type.Optional(Type.String()),
  'per-page': Type.Optional(Type.String()),
});

/** Maps a stored entry to its record (API.md §15.5). */
export const auditEntryRecord =
  (time: TimeFormat) =>
  (r: AuditEntryRow): AuditEntryRecord => ({
    Id: r.id,
    DateCreated: time.dateTime(Number(r.created_at)),
    Actor: r.actor,
    Ip: r.ip,
    Operation: r.operation,
    ObjectId: r.object_id,
    Status: Number(r.status),
    RequestId: r.request_id,
  });
