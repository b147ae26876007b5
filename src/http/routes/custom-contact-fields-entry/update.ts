import { CustomFieldValueRecordSchema } from '../../../domain/records.ts';
import { updateEntry } from '../../../domain/custom-fields.ts';
import { readBody } from '../../plugins/body.ts';
import { requiredId } from '../../params.ts';
import type { Operation } from '../types.ts';

/**
 * Spec "POST or PUT /v1/custom-contact-fields-entry/update?id=": body `frfield`, `frcontact`,
 * `fvalue`; replies the Custom field value record. Answers POST, PUT and PATCH (CONVENTIONS §5).
 */
export const customContactFieldsEntryUpdate: Operation = {
  path: '/v1/custom-contact-fields-entry/update',
  methods: ['POST', 'PUT', 'PATCH'],
  register(app, { store, mappers }) {
    app.route({
      method: [...this.methods],
      url: this.path,
      schema: { response: { 200: CustomFieldValueRecordSchema } },
      handler: async (request) => {
        const id = requiredId(request);
        return mappers.entry(await updateEntry(store, request.accountId, id, readBody(request)));
      },
    });
  },
};
