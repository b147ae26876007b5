import { Type } from '@sinclair/typebox';
import { auditFilter, countAudit, listAudit } from '../../../domain/audit.ts';
import { AuditEntryRecordSchema, AuditQuery, auditEntryRecord } from '../../../records/audit.ts';
import { defineOperation } from '../../operation.ts';

/**
 * docs/API.md §15.5 `GET /v1/audit/index` (scope `audit:read`): the account's audit log, newest
 * first, paginated; filters `Actor`, `Operation`, `from`, `to`.
 */
export const auditIndex = defineOperation({
  id: 'audit.index',
  path: '/v1/audit/index',
  resource: 'audit',
  methods: ['GET'],
  summary: "List the account's audit log, newest first",
  success: 200,
  schema: { query: AuditQuery, response: Type.Array(AuditEntryRecordSchema) },
  handler: ({ store, time, config }) => {
    const toRecord = auditEntryRecord(time);
    return async (ctx) => {
      const filter = auditFilter((name) => ctx.query(name), config.timeZone);
      return ctx.paginate(
        await countAudit(store, ctx.accountId, filter),
        (limit, offset) => listAudit(store, ctx.accountId, filter, limit, offset),
        toRecord,
      );
    };
  },
});

/** `/v1/audit/…`: the one operation, `index`. */
export const audit = [auditIndex];
