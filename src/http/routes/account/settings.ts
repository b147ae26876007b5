import { viewAccountSettings } from '../../../domain/account-settings.ts';
import { AccountSettingsRecordSchema, accountSettingsRecord } from '../../../records/account-settings.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §14.3.4 `GET /v1/account/settings`: the Account settings record (TimeZone: the zone in effect; SenderSelection, §17). */
export const accountSettings = defineOperation({
  id: 'account.settings',
  path: '/v1/account/settings',
  resource: 'account',
  methods: ['GET'],
  summary: "Read the account's settings (quiet hours, time zone, sender selection)",
  success: 200,
  schema: { response: AccountSettingsRecordSchema },
  handler: ({ store, config }) => {
    const toRecord = accountSettingsRecord(config.timeZone);
    return async (ctx) => toRecord(await viewAccountSettings(store, ctx.accountId));
  },
});
