import { updateAccountSettings } from '../../../domain/account-settings.ts';
import { systemClock } from '../../../lib/time.ts';
import { AccountSettingsBodySchema, AccountSettingsRecordSchema, accountSettingsRecord } from '../../../records/account-settings.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §14.3.4 `PUT|PATCH /v1/account/settings`: changes the fields sent (QuietHoursStart,
 * QuietHoursEnd, TimeZone, and SenderSelection of API.md §17), releases the messages held by
 * quiet hours, and replies the settings.
 */
export const accountUpdateSettings = defineOperation({
  id: 'account.update-settings',
  path: '/v1/account/settings',
  resource: 'account',
  methods: ['PUT', 'PATCH'],
  summary: "Change the account's settings (quiet hours, time zone, sender selection)",
  success: 200,
  schema: { body: AccountSettingsBodySchema, response: AccountSettingsRecordSchema },
  handler: ({ store, config, clock }) => {
    const toRecord = accountSettingsRecord(config.timeZone);
    const deps = { store, clock: clock ?? systemClock };
    return async (ctx) => toRecord(await updateAccountSettings(deps, ctx.accountId, ctx.body()));
  },
});
