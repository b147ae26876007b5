import { inTransaction, type Store } from '../store/db.ts';
import * as repo from '../store/repositories/account-settings.ts';
import {
  DEFAULT_ACCOUNT_SETTINGS,
  SENDER_SELECTIONS,
  type AccountSettingsRecordRow,
  type SenderSelection,
} from '../records/account-settings.ts';
import type { Clock } from '../lib/time.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { HOURS_PATTERN, isTimeZoneName } from './quiet-hours.ts';
import { fieldLabel, type Input } from './validation.ts';

/**
 * Account settings (API.md §14.3.4): `GET /v1/account/settings` and `PUT|PATCH
 * /v1/account/settings`: the quiet hours (`QuietHoursStart`, `QuietHoursEnd`), the
 * account's `TimeZone`, and its `SenderSelection` (API.md §17). What the dispatcher does with the
 * first three: src/dispatch/dispatcher.ts and src/domain/quiet-hours.ts; with the last, the
 * queueing of messages: src/domain/sender-pool.ts.
 *
 * Choices API.md §14.3.4 leaves open, written down here:
 * - `TimeZone` is stored as sent; an account that never chose one (or sent `""` or `null`) follows
 *   MSGSVC_TIMEZONE, and GET shows that zone, the one in effect, by its configured name. Sending
 *   the service's zone by name pins it (a later change of MSGSVC_TIMEZONE no longer moves it).
 * - `""` and `null` are the same for every field ("empty", as Yii2 reads them).
 * - The two hours go together in the settings as they will be after the PUT: a field not sent
 *   keeps its stored value, and when exactly one of the two would be empty, that one gets
 *   `{Label} cannot be blank.` (`QuietHoursEnd` alone on an account without hours: `Quiet Hours
 *   Start cannot be blank.`; `QuietHoursStart: ""` alone while hours are set: the same). A
 *   malformed hour counts as given for this rule (it gets its own error).
 * - Hours are exactly `HH:MM`, 24-hour, `00:00` to `23:59`: anything else (`7:00`, `24:00`,
 *   `22:00:00`, ` 22:00`) is `The format of {Label} is invalid.` (Yii2's date validator message);
 *   a value that is no string (a number, `true`, an array, an object) is `{Label} must be a string.`
 *   Equal hours (after the PUT) are `Quiet Hours End is invalid.`
 * - A valid zone name: src/domain/quiet-hours.ts `isTimeZoneName` (an IANA zone or link name,
 *   exact case: `UTC` and `Etc/GMT+5` are valid, `utc` and `+05:00` are not).
 * - `SenderSelection` is exactly `first` or `pool` (case included); anything else, `""` and
 *   `null` too (it has no empty value), is `Sender Selection is invalid.`
 * - Errors are listed in the order QuietHoursStart, QuietHoursEnd, TimeZone, SenderSelection, one
 *   per field; with any error nothing is saved.
 * - Every valid PUT makes the account's held messages due at once (src/store/repositories/
 *   account-settings.ts `releaseQuietHeld`), in the transaction that saves the settings; the
 *   dispatcher then holds again those still inside the (new) quiet hours. A PUT that changes
 *   nothing writes no settings row.
 */

const FIELDS = ['QuietHoursStart', 'QuietHoursEnd', 'TimeZone', 'SenderSelection'] as const;
type Field = (typeof FIELDS)[number];

/** What the settings operations need: the store and the clock (due times of released messages). */
export interface AccountSettingsDeps {
  store: Store;
  clock: Clock;
}

/** The account's settings (the defaults when it never saved any). */
export async function viewAccountSettings(store: Store, accountId: number): Promise<AccountSettingsRecordRow> {
  return (await repo.findSettings(store.db, accountId)) ?? DEFAULT_ACCOUNT_SETTINGS;
}

const isEmptyValue = (v: unknown) => v === null || v === '';

/** An hour field as sent: empty, a valid `HH:MM`, or an error message. */
function readHours(field: Field, value: unknown): { value: string | null } | { error: string } {
  if (isEmptyValue(value)) return { value: null };
  if (typeof value !== 'string') return { error: `${fieldLabel(field)} must be a string.` };
  if (!HOURS_PATTERN.test(value)) return { error: `The format of ${fieldLabel(field)} is invalid.` };
  return { value };
}

/**
 * Changes the fields sent of the account's settings (API.md §14.3.4, §4.6) and releases its
 * held messages (see the module comment).
 * @returns the settings after the change.
 * @throws ValidationFailedError (422), one error per field, in the order QuietHoursStart,
 *   QuietHoursEnd, TimeZone, SenderSelection: `Quiet Hours Start cannot be blank.`, `Quiet Hours
 *   End cannot be blank.`, `The format of Quiet Hours Start is invalid.`, `Quiet Hours Start must
 *   be a string.` (and the same for End), `Quiet Hours End is invalid.` (equal hours), `Time Zone
 *   must be a string.`, `Time Zone is invalid.`, `Sender Selection is invalid.`
 */
export async function updateAccountSettings(deps: AccountSettingsDeps, accountId: number, input: Input): Promise<AccountSettingsRecordRow> {
  const sent = (f: Field) => Object.hasOwn(input, f);
  const errors = new Map<Field, string>();
  const given: Partial<Record<Field, string | null>> = {};
  for (const f of ['QuietHoursStart', 'QuietHoursEnd'] as const) {
    if (!sent(f)) continue;
    const r = readHours(f, input[f]);
    if ('error' in r) errors.set(f, r.error);
    else given[f] = r.value;
  }
  if (sent('TimeZone')) {
    const v = input.TimeZone;
    if (isEmptyValue(v)) given.TimeZone = null;
    else if (typeof v !== 'string') errors.set('TimeZone', `${fieldLabel('TimeZone')} must be a string.`);
    else if (!isTimeZoneName(v)) errors.set('TimeZone', `${fieldLabel('TimeZone')} is invalid.`);
    else given.TimeZone = v;
  }
  let senderSelection: SenderSelection | undefined;
  if (sent('SenderSelection')) {
    const v = input.SenderSelection;
    if (typeof v === 'string' && (SENDER_SELECTIONS as readonly string[]).includes(v)) senderSelection = v as SenderSelection;
    else errors.set('SenderSelection', `${fieldLabel('SenderSelection')} is invalid.`);
  }
  return inTransaction(deps.store, async (tx) => {
    const current = (await repo.findSettings(tx, accountId)) ?? DEFAULT_ACCOUNT_SETTINGS;
    const next = {
      quietStart: sent('QuietHoursStart') ? (given.QuietHoursStart ?? null) : current.quiet_start,
      quietEnd: sent('QuietHoursEnd') ? (given.QuietHoursEnd ?? null) : current.quiet_end,
      timeZone: sent('TimeZone') ? (given.TimeZone ?? null) : current.time_zone,
      senderSelection: senderSelection ?? current.sender_selection,
    };
    // Together: a malformed hour counts as given (it has its own error).
    const hasStart = errors.has('QuietHoursStart') || next.quietStart !== null;
    const hasEnd = errors.has('QuietHoursEnd') || next.quietEnd !== null;
    if (hasStart && !hasEnd) errors.set('QuietHoursEnd', `${fieldLabel('QuietHoursEnd')} cannot be blank.`);
    if (hasEnd && !hasStart) errors.set('QuietHoursStart', `${fieldLabel('QuietHoursStart')} cannot be blank.`);
    if (!errors.has('QuietHoursStart') && !errors.has('QuietHoursEnd') && next.quietStart !== null && next.quietStart === next.quietEnd) {
      errors.set('QuietHoursEnd', `${fieldLabel('QuietHoursEnd')} is invalid.`);
    }
    if (errors.size > 0) {
      const list: FieldError[] = FIELDS.filter((f) => errors.has(f)).map((f) => ({ field: f, message: errors.get(f)! }));
      throw new ValidationFailedError(list);
    }
    const changed =
      next.quietStart !== current.quiet_start ||
      next.quietEnd !== current.quiet_end ||
      next.timeZone !== current.time_zone ||
      next.senderSelection !== current.sender_selection;
    if (changed) await repo.saveSettings(tx, accountId, next, deps.clock.nowSeconds());
    await repo.releaseQuietHeld(tx, accountId, deps.clock.nowMs());
    return { quiet_start: next.quietStart, quiet_end: next.quietEnd, time_zone: next.timeZone, sender_selection: next.senderSelection };
  });
}
