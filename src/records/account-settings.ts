import { type Static, Type } from '@sinclair/typebox';
import type { Row } from '../store/tables.ts';
import { Str } from './common.ts';

/** The columns of `account_settings` the Account settings record shows. */
export const ACCOUNT_SETTINGS_COLUMNS = ['quiet_start', 'quiet_end', 'time_zone', 'sender_selection'] as const;
/** An account's stored settings (null hours: none; null zone: the service's). */
export type AccountSettingsRecordRow = Pick<Row<'account_settings'>, (typeof ACCOUNT_SETTINGS_COLUMNS)[number]>;

/** The values of `SenderSelection` (API.md §17): `first` (the first Active number) or `pool`. */
export const SENDER_SELECTIONS = ['first', 'pool'] as const;
export type SenderSelection = (typeof SENDER_SELECTIONS)[number];

/** The settings of an account that never saved any: no quiet hours, the service's zone, the first Active number. */
export const DEFAULT_ACCOUNT_SETTINGS: AccountSettingsRecordRow = Object.freeze({
  quiet_start: null,
  quiet_end: null,
  time_zone: null,
  sender_selection: 'first',
});

/** API.md §14.3.4 Account settings (and §17 `SenderSelection`), fields in wire order. */
export const AccountSettingsRecordSchema = Type.Object({
  QuietHoursStart: Str(),
  QuietHoursEnd: Str(),
  TimeZone: Str(),
  SenderSelection: Type.String({ enum: [...SENDER_SELECTIONS], description: '`first` (default) or `pool` (docs/API.md §17)' }),
});
export type AccountSettingsRecord = Static<typeof AccountSettingsRecordSchema>;

const HOURS = '^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9])?$';

/**
 * Body of `PUT|PATCH /v1/account/settings` (documentation: the checks are the domain's rules,
 * src/domain/account-settings.ts). Every field is optional; only the fields sent change.
 */
export const AccountSettingsBodySchema = Type.Object({
  QuietHoursStart: Type.Optional(
    Type.String({ pattern: HOURS, description: '`HH:MM` (24-hour) the quiet hours start; `""` with QuietHoursEnd `""` clears them' }),
  ),
  QuietHoursEnd: Type.Optional(
    Type.String({ pattern: HOURS, description: '`HH:MM` (24-hour) they end; earlier than the start spans midnight' }),
  ),
  TimeZone: Type.Optional(Type.String({ description: 'an IANA time zone name; `""` follows the service default again' })),
  SenderSelection: Type.Optional(
    Type.String({
      enum: [...SENDER_SELECTIONS],
      description: "`first`: the first Active number sends a message without `Number`; `pool`: the sender pool's choice",
    }),
  ),
});

/**
 * Maps stored settings to the record: the hours as stored (`""` when none), the zone as stored
 * or, when none was chosen, `defaultZone` (MSGSVC_TIMEZONE), the zone in effect.
 */
export const accountSettingsRecord =
  (defaultZone: string) =>
  (r: AccountSettingsRecordRow): AccountSettingsRecord => ({
    QuietHoursStart: r.quiet_start ?? '',
    QuietHoursEnd: r.quiet_end ?? '',
    TimeZone: r.time_zone ?? defaultZone,
    SenderSelection: r.sender_selection,
  });
