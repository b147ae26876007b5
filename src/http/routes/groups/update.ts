import { GroupRecordSchema } from '../../../domain/records.ts';
import { updateGroup } from '../../../domain/groups.ts';
import { readBody } from '../../plugins/body.ts';
import { requiredId } from '../../params.ts';
import type { Operation } from '../types.ts';

/** Spec "PUT /v1/groups/update?id=": body `fname` (required) and `fnote`; replies the Group record. */
export const groupsUpdate: Operation = {
  path: '/v1/groups/update',
  methods: ['PUT', 'PATCH'],
  register(app, { store, mappers }) {
    app.route({
      method: [...this.methods],
      url: this.path,
      schema: { response: { 200: GroupRecordSchema } },
      handler: async (request) => {
        const id = requiredId(request);
        return mappers.group(await updateGroup(store, request.accountId, id, readBody(request)));
      },
    });
  },
};
