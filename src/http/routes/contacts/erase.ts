import { Type } from '@sinclair/typebox';
import { eraseContact } from '../../../domain/erasure.ts';
import { systemClock } from '../../../lib/time.ts';
import { defineOperation } from '../../operation.ts';

/**
 * contacts/erase?number= (API.md §10.2.1): erases a person's data when they ask. 204 (also for a
 * number never seen, or erased already); 422 `Number cannot be blank.` / `Number is invalid.`;
 * all in one transaction. The audit entry's ObjectId is the erased contact's Id, never the number.
 */
export const contactsErase = defineOperation({
  id: 'contacts.erase',
  path: '/v1/contacts/erase',
  resource: 'contacts',
  methods: ['DELETE'],
  summary: "Erase a person's data: the contact, its values and memberships; the number and texts in the log",
  success: 204,
  schema: {
    query: Type.Object({ number: Type.String({ description: 'phone number in any common format' }) }),
  },
  handler: ({ store, config, clock }) => {
    const deps = { store, clock: clock ?? systemClock, region: config.defaultRegion };
    return async (ctx) => {
      await eraseContact(deps, ctx.accountId, ctx.param('number'));
    };
  },
});
