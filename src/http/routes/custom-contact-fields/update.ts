import { CustomFieldRecordSchema } from '../../../domain/records.ts';
import { renameCustomField } from '../../../domain/custom-fields.ts';
import { readBody } from '../../plugins/body.ts';
import { requiredId } from '../../params.ts';
import type { Operation } from '../types.ts';

/** Spec "PUT /v1/custom-contact-fields/update?id=": body `fname`; replies the Custom field record. */
export const customContactFieldsUpdate: Operation = {
  path: '/v1/custom-contact-fields/update',
  methods: ['PUT', 'PATCH'],
  register(app, { store, mappers }) {
    app.route({
      method: [...this.methods],
      url: this.path,
      schema: { response: { 200: CustomFieldRecordSchema } },
      handler: async (request) => {
        const id = requiredId(request);
        return mappers.customField(await renameCustomField(store, request.accountId, id, readBody(request)));
      },
    });
  },
};
