import { deleteMediaById } from '../../../domain/media.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { systemClock } from '../../../lib/time.ts';

/** API.md §10.7 `DELETE /v1/media/delete?id=`: 204; the media also leaves every template's MediaIds. */
export const mediaDelete = defineOperation({
  id: 'media.delete',
  path: '/v1/media/delete',
  resource: 'media',
  methods: ['DELETE'],
  summary: 'Delete a media (and remove it from templates)',
  success: 204,
  schema: { query: IdQuery },
  handler:
    ({ store, clock }) =>
    async (ctx) => {
      await deleteMediaById(store, clock ?? systemClock, ctx.accountId, ctx.id());
    },
});
