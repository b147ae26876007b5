import { Type } from '@sinclair/typebox';
import { countLedger, ledgerFilter, listLedger } from '../../../domain/credits.ts';
import { LedgerEntryRecordSchema, LedgerQuery, ledgerEntryRecord } from '../../../records/credits.ts';
import { defineOperation } from '../../operation.ts';

/**
 * docs/API.md §10.1.1 `GET /v1/credits/ledger` (scope `credits:read`): every change of the
 * account's AvailableCredits, newest first, paginated; filters `Type`, `from`, `to`.
 */
export const creditsLedger = defineOperation({
  id: 'credits.ledger',
  path: '/v1/credits/ledger',
  resource: 'credits',
  methods: ['GET'],
  summary: "List the account's credit ledger, newest first",
  success: 200,
  schema: { query: LedgerQuery, response: Type.Array(LedgerEntryRecordSchema) },
  handler: ({ store, time, config }) => {
    const toRecord = ledgerEntryRecord(time);
    return async (ctx) => {
      const filter = ledgerFilter((name) => ctx.query(name), config.timeZone);
      return ctx.paginate(
        await countLedger(store, ctx.accountId, filter),
        (limit, offset) => listLedger(store, ctx.accountId, filter, limit, offset),
        toRecord,
      );
    };
  },
});
