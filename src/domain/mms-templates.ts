import { inTransaction, type Store } from '../store/db.ts';
import * as media from '../store/repositories/media.ts';
import * as scheduled from '../store/repositories/scheduled.ts';
import { refundCredits } from '../store/repositories/credits.ts';
import type { Db } from '../store/types.ts';
import type { MmsTemplateRow } from '../records/media.ts';
import { NotFoundError, ValidationFailedError, type FieldError } from './errors.ts';
import { loadOr404 } from './find.ts';
import type { Clock } from '../lib/time.ts';
import { defineRules, messages, toId, validate, type Input } from './validation.ts';
import { readSearch } from './search.ts';

/**
 * MMS templates (API.md §10.7 `/v1/mms-templates/…`): `Name` (required, 3 to 64
 * characters), `Subject` (at most 255), `Message` (at most 1,600), `MediaIds` (required, 1 to 10
 * media ids of the account; a repeated id counts once, the order sent is kept). A reference to a
 * media the caller does not own gives `Media Ids is invalid.` (API.md §1.3). An update
 * changes only the fields sent; a required one may be left out, not sent blank.
 */

const MAX_ROW_ID = 2_147_483_647;

const RULES = defineRules([
  { field: 'Name', rule: 'required' },
  { field: 'Name', rule: 'string', min: 3, max: 64 },
  { field: 'Subject', rule: 'string', max: 255 },
  { field: 'Message', rule: 'string', max: 1600 },
  { field: 'MediaIds', rule: 'required' },
  { field: 'MediaIds', rule: 'ids', max: 10 },
]);

/** The rules over the fields present (all for a create), and the MediaIds reference check. */
async function check(tx: Parameters<typeof media.ownedMediaIds>[0], accountId: number, input: Input, mode: 'create' | 'update') {
  const fields: Record<string, unknown> = {};
  for (const f of ['Name', 'Subject', 'Message', 'MediaIds']) if (mode === 'create' || Object.hasOwn(input, f)) fields[f] = input[f];
  const rules = mode === 'create' ? RULES : RULES.filter((r) => r.rule !== 'required' || Object.hasOwn(fields, r.field));
  const checked = validate(fields, rules);
  const errors: FieldError[] = [...checked.errors];
  const ids = checked.values.MediaIds;
  if (ids !== undefined) {
    const valid = ids.every((n) => n >= 1 && n <= MAX_ROW_ID);
    const owned = valid ? await media.ownedMediaIds(tx, accountId, ids) : new Set<number>();
    if (!valid || ids.some((n) => !owned.has(n))) errors.push({ field: 'MediaIds', message: messages.invalid('MediaIds') });
  }
  return { errors, values: checked.values, has: (f: string) => Object.hasOwn(fields, f) };
}

/**
 * One page of the account's templates by Id ascending (API.md §10.7 `index`).
 * @param search msgsvc's `Search` query parameter as received: when not blank, only the templates
 *   whose `Name` contains it (ASCII letters in any case; src/domain/search.ts, src/store/search.ts).
 * @throws ValidationFailedError (422 on `Search`: over 255 characters, not a string).
 */
export async function templatesPage(
  store: Store,
  accountId: number,
  search?: unknown,
): Promise<{ total: number; fetch: (limit: number, offset: number) => Promise<MmsTemplateRow[]> }> {
  const text = readSearch(search);
  return {
    total: await media.countTemplates(store.db, accountId, text),
    fetch: (limit, offset) => media.listTemplates(store.db, accountId, limit, offset, text),
  };
}

/** One template of the account (API.md §10.7 `view`). @throws NotFoundError `Object not found: {id}`. */
export async function viewTemplate(store: Store, accountId: number, id: string): Promise<MmsTemplateRow> {
  return loadOr404(id, (n) => (n > MAX_ROW_ID ? Promise.resolve(undefined) : media.findTemplate(store.db, accountId, n)));
}

/**
 * Creates a template (API.md §10.7 `create`).
 * @throws ValidationFailedError with the first error of each field, e.g. `Name cannot be blank.`,
 *   `Name should contain at least 3 characters.`, `Media Ids cannot be blank.`, `Media Ids is invalid.`
 */
export async function createTemplate(store: Store, clock: Clock, accountId: number, input: Input): Promise<MmsTemplateRow> {
  return inTransaction(store, async (tx) => {
    const { errors, values } = await check(tx, accountId, input, 'create');
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const id = await media.insertTemplate(
      tx,
      accountId,
      { name: values.Name!, subject: values.Subject ?? '', message: values.Message ?? '' },
      clock.nowSeconds(),
    );
    await media.setTemplateMedia(tx, accountId, id, values.MediaIds!);
    return (await media.findTemplate(tx, accountId, id))!;
  });
}

/**
 * Changes the fields sent of a template (API.md §10.7 `update`). An update whose every value equals the
 * stored one (MediaIds: the same ids in the same order) saves nothing and leaves DateUpdated as it
 * was (docs/API.md §4.6).
 * @throws NotFoundError `Object not found: {id}` before any 422 (API.md §1.5).
 * @throws ValidationFailedError as `createTemplate`.
 */
export async function updateTemplate(store: Store, clock: Clock, accountId: number, id: string, input: Input): Promise<MmsTemplateRow> {
  return inTransaction(store, async (tx) => {
    const current = await loadOr404(id, (n) => (n > MAX_ROW_ID ? Promise.resolve(undefined) : media.findTemplate(tx, accountId, n)));
    const n = current.id;
    const { errors, values, has } = await check(tx, accountId, input, 'update');
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const change = {
      ...(values.Name !== undefined ? { name: values.Name } : {}),
      ...(has('Subject') ? { subject: values.Subject ?? '' } : {}),
      ...(has('Message') ? { message: values.Message ?? '' } : {}),
    };
    const fieldsChanged = (Object.keys(change) as (keyof typeof change)[]).some((k) => change[k] !== current[k]);
    const mediaIds = values.MediaIds;
    const mediaChanged =
      mediaIds !== undefined && (mediaIds.length !== current.media_ids.length || mediaIds.some((m, i) => m !== current.media_ids[i]));
    if (!fieldsChanged && !mediaChanged) return current;
    await media.changeTemplate(tx, accountId, n, change, clock.nowSeconds());
    if (mediaChanged) await media.setTemplateMedia(tx, accountId, n, mediaIds);
    return (await media.findTemplate(tx, accountId, n))!;
  });
}

/**
 * Deletes a template (API.md §10.7 `delete`); the approved scheduled MMS that named it are checked
 * again (`recheckScheduledWithoutMedia`), in the same transaction.
 * @throws NotFoundError `Object not found: {id}`.
 */
export async function deleteTemplateById(store: Store, clock: Clock, accountId: number, id: string): Promise<void> {
  await inTransaction(store, async (tx) => {
    const n = toId(id);
    if (n === null || n > MAX_ROW_ID || !(await media.deleteTemplate(tx, accountId, n))) throw new NotFoundError(id);
    await recheckScheduledWithoutMedia(tx, accountId, clock);
  });
}

/**
 * True when `MmsTemplateId` names a template of the account (API.md §10.6, §10.7: an MMS
 * schedule names its template; anything else is `Mms Template Id is invalid.`). Whether it still
 * holds media is the scheduler's check (`NO_MEDIA`), not the schedule's.
 */
export async function ownsTemplate(db: Parameters<typeof media.templateExists>[0], accountId: number, id: number): Promise<boolean> {
  return Number.isSafeInteger(id) && id >= 1 && id <= MAX_ROW_ID && media.templateExists(db, accountId, id);
}

/**
 * True when `MmsTemplateId` names a template of the account that still holds at least one medium:
 * what `sms/send`, `send-group` and `preview` accept (API.md §10.7: a template whose media have
 * all been deleted cannot be sent; it is `Mms Template Id is invalid.`, as another account's is).
 */
export async function sendableTemplate(db: Parameters<typeof media.templateHasMedia>[0], accountId: number, id: number): Promise<boolean> {
  return Number.isSafeInteger(id) && id >= 1 && id <= MAX_ROW_ID && media.templateHasMedia(db, accountId, id);
}

/**
 * After a medium was deleted (media/delete) or a template (mms-templates/delete), in that
 * transaction: the account's scheduled MMS whose template now holds no medium, or is gone, and
 * that are Approved and Scheduled or Pending, are checked again as after an update (API.md §11.7):
 * 1 Pending, their reservation released, their check due now, any check in progress dropped (a
 * scheduler that read the media before this commit cannot approve them). The balance row is locked
 * first (the lock order of src/store/repositories/scheduled.ts). The scheduler then makes them
 * Action Required (`NO_MEDIA`) within a second, so no scheduled MMS goes out without a picture.
 */
export async function recheckScheduledWithoutMedia(tx: Db, accountId: number, clock: Clock): Promise<void> {
  await scheduled.lockCredits(tx, accountId);
  const released = await scheduled.recheckWithoutMedia(tx, accountId, clock.nowMs());
  if (released > 0)
    await refundCredits(tx, accountId, released, clock.nowSeconds(), '', 'Scheduled MMS without media: reservations released');
}
