import { ContactRecordSchema } from '../../../domain/records.ts';
import { findContact } from '../../../domain/contacts.ts';
import { requiredParam } from '../../params.ts';
import type { Operation } from '../types.ts';

/** Spec "GET /v1/contacts/find?number=": one Contact record, looked up by the normalised number. */
export const contactsFind: Operation = {
  path: '/v1/contacts/find',
  methods: ['GET'],
  register(app, { store, mappers, config }) {
    app.get(this.path, { schema: { response: { 200: ContactRecordSchema } } }, async (request) => {
      const number = requiredParam(request, 'number');
      return mappers.contact(await findContact(store, request.accountId, number, config.defaultRegion));
    });
  },
};
