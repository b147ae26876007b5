import { CreditBalanceRecordSchema } from '../../../domain/records.ts';
import { getCredits } from '../../../store/repositories/accounts.ts';
import { resolvePage, setPaginationHeaders } from '../../serializers/pagination.ts';
import type { Operation } from '../types.ts';

/**
 * Spec "GET /v1/credits/balance": `{"AvailableCredits": n}`, sent with the pagination headers of a
 * one-item collection and `Link rel=self`, as the spec shows (CONVENTIONS §7).
 */
export const creditsBalance: Operation = {
  path: '/v1/credits/balance',
  methods: ['GET'],
  register(app, { store }) {
    app.get(this.path, { schema: { response: { 200: CreditBalanceRecordSchema } } }, async (request, reply) => {
      const credits = await getCredits(store.db, request.accountId);
      setPaginationHeaders(request, reply, resolvePage(request, 1));
      return { AvailableCredits: credits };
    });
  },
};
