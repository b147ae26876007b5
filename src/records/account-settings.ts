import { type Static, Type } from '@sinclair/typebox';
import type { Row } from '../store/tables.ts';
import { Str } from './common.ts';

/** The columns of `account_settings` the Account settings record shows. */
export const ACCOUNT_SETTINGS_COLUMNS = ['quiet_start', 'quiet_end', 'time_zone'] as const;
/** An account's stored settings (null hours: none; null zone: the service's). */
export type AccountSettingsRecordRow = Pick<Row<'account_settings'>, (typeof ACCOUNT_SETTINGS_COLUMNS)[number]>;

/** The settings of an account that never saved any: no quiet hours, the service's zone. */
export const DEFAULT_ACCOUNT_SETTINGS: AccountSettingsRecordRow = Object.freeze({ quiet_start: null, quiet_end: null, time_zone: null });

/** API.md §14.3.4 Account settings, fields in wire order. */
export const AccountSettingsRecordSchema = Type.Object({
  QuietHoursStart: Str(),
  QuietHoursEnd: Str(),
  TimeZone: Str(),
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
  });
