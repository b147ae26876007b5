import { Type } from '@sinclair/typebox';
import { NumberRecordSchema } from '../../../domain/records.ts';
import * as numbers from '../../../store/repositories/numbers.ts';
import { resolvePage, setPaginationHeaders } from '../../serializers/pagination.ts';
import type { Operation } from '../types.ts';

/** Spec "GET /v1/numbers/index": the account's Number records, paginated (CONVENTIONS §7). */
export const numbersIndex: Operation = {
  path: '/v1/numbers/index',
  methods: ['GET'],
  register(app, { store, mappers }) {
    app.get(this.path, { schema: { response: { 200: Type.Array(NumberRecordSchema) } } }, async (request, reply) => {
      const page = resolvePage(request, await numbers.countNumbers(store.db, request.accountId));
      const rows = await numbers.listNumbers(store.db, request.accountId, page.size, page.offset);
      setPaginationHeaders(request, reply, page);
      return rows.map(mappers.number);
    });
  },
};
