import { creditBalance } from '../../../domain/accounts.ts';
import { CreditBalanceRecordSchema } from '../../../records/credits.ts';
import { resolvePage, setPaginationHeaders } from '../../serializers/pagination.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §9: `{"AvailableCredits": n}`, sent with the pagination headers of a
 * one-item collection and `Link rel=self`, as API.md shows (API.md §5).
 */
export const creditsBalance = defineOperation({
  id: 'credits.balance',
  path: '/v1/credits/balance',
  resource: 'credits',
  methods: ['GET'],
  summary: 'Read the available credit balance',
  success: 200,
  schema: { response: CreditBalanceRecordSchema },
  handler:
    ({ store }) =>
    async (ctx) => {
      const credits = await creditBalance(store, ctx.accountId);
      setPaginationHeaders(ctx.request, ctx.reply, resolvePage(ctx.request, 1));
      return { AvailableCredits: credits };
    },
});
