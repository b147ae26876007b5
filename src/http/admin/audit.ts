import { Type } from '@sinclair/typebox';
import { countAllAudit, listAllAudit, operatorAuditFilter } from '../../domain/operators.ts';
import { defineAdminOperation } from './operation.ts';
import { OperatorAuditEntryRecordSchema, OperatorAuditQuery, operatorAuditEntryRecord } from './records.ts';

/**
 * `GET /admin/v1/audit/index` (docs/API.md §16.4): the audit log of every account, newest first,
 * paginated; the filters of `/v1/audit/index` (`Actor`, `Operation`, `from`, `to`) and `AccountId`.
 * Each entry adds `AccountId`. The operator's own writes are there as `operator:{Id}:{Name}`.
 */
export const adminAuditIndex = defineAdminOperation({
  id: 'admin.audit.index',
  path: '/admin/v1/audit/index',
  methods: ['GET'],
  summary: "List every account's audit log, newest first",
  success: 200,
  schema: { query: OperatorAuditQuery, response: Type.Array(OperatorAuditEntryRecordSchema) },
  handler: ({ store, time, config }) => {
    const toRecord = operatorAuditEntryRecord(time);
    return async (ctx) => {
      const filter = operatorAuditFilter((name) => ctx.query(name), config.timeZone);
      return ctx.paginate(await countAllAudit(store, filter), (limit, offset) => listAllAudit(store, filter, limit, offset), toRecord);
    };
  },
});

export const adminAudit = [adminAuditIndex];
