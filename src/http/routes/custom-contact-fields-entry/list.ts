import { Type } from '@sinclair/typebox';
import { countEntries, entryFilter, listEntries } from '../../../domain/custom-fields.ts';
import { PageQuery } from '../../../records/common.ts';
import { CustomFieldValueRecordSchema, entryRecord } from '../../../records/custom-fields.ts';
import { defineOperation } from '../../operation.ts';

/**
 * `GET /v1/custom-contact-fields-entry/index` (API.md §10.4): the account's Custom field value
 * records by Id, paginated (API.md §5), optionally only those of one field (`frfield`) and/or
 * one contact (`frcontact`). A filter that is not an integer is a 422; another account's id gives
 * an empty list.
 */
export const customContactFieldsEntryIndex = defineOperation({
  id: 'custom-contact-fields-entry.index',
  path: '/v1/custom-contact-fields-entry/index',
  resource: 'fields',
  methods: ['GET'],
  summary: "List the account's custom field values",
  success: 200,
  schema: {
    query: Type.Object({
      ...PageQuery.properties,
      frfield: Type.Optional(Type.String({ description: 'only the values of this custom field id' })),
      frcontact: Type.Optional(Type.String({ description: 'only the values of this contact id' })),
    }),
    response: Type.Array(CustomFieldValueRecordSchema),
  },
  handler: ({ store, time }) => {
    const toRecord = entryRecord(time);
    return async (ctx) => {
      const filter = entryFilter({ frfield: ctx.query('frfield'), frcontact: ctx.query('frcontact') });
      if (filter === null) return ctx.paginate(0, () => Promise.resolve([]), toRecord);
      return ctx.paginate(
        await countEntries(store, ctx.accountId, filter),
        (limit, offset) => listEntries(store, ctx.accountId, filter, limit, offset),
        toRecord,
      );
    };
  },
});
