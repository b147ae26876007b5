import { inTransaction, type Store } from '../store/db.ts';
import * as groups from '../store/repositories/groups.ts';
import { ForeignKeyViolation } from '../store/errors.ts';
import type { GroupRow } from '../records/groups.ts';
import { findOr404, loadOr404 } from './find.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { defineRules, messages, validate, type Input } from './validation.ts';
import { readSearch } from './search.ts';
import { nowSeconds } from '../lib/time.ts';
import type { Db } from '../store/types.ts';

/**
 * Groups (API.md §9.5, §10.3). Every service validates the
 * body without the database first, then, in one transaction, finds the group or throws 404, then
 * runs the checks that need the database, and throws one 422 with the first error of each field
 * (API.md §1.5, §4.4). Rule order: fname required, fname string, fnote string, KeywordId integer,
 * ParentId integer, then the references (KeywordId, ParentId) as Yii2 `exist`-style rules last.
 */

/** API.md §10.3: fname required, fname and fnote 3 to 255 characters, KeywordId, ParentId integers. */
const GROUP_RULES = defineRules([
  { field: 'fname', rule: 'required' },
  { field: 'fname', rule: 'string', min: 3, max: 255 },
  { field: 'fnote', rule: 'string', min: 3, max: 255 },
  { field: 'KeywordId', rule: 'integer' },
  { field: 'ParentId', rule: 'integer' },
]);

/** API.md §10.3 add-contacts / remove-contacts: PhoneNumberIds, required, 1 to 1,000 ids. */
const MEMBER_RULES = defineRules([
  { field: 'PhoneNumberIds', rule: 'required' },
  { field: 'PhoneNumberIds', rule: 'ids', max: 1000 },
]);

/** A value that can be a row id (positive and within the id column), else null. */
function rowId(n: number | undefined): number | null {
  return n !== undefined && Number.isSafeInteger(n) && n >= 1 && n <= groups.MAX_ROW_ID ? n : null;
}

/** `findOr404` for groups: ids beyond the id column are simply not found (never sent to the database). */
function findGroupOr404(tx: Db, accountId: number, id: string): Promise<number> {
  return findOr404(id, (n) => (n > groups.MAX_ROW_ID ? Promise.resolve(false) : groups.groupExists(tx, accountId, n)));
}

/**
 * The reference errors of a create or update (API.md §1.4, §10.3): KeywordId must be 0 or a
 * keyword reservation of the account; ParentId must be 0 or a group of the account that is not
 * `self` and not below `self` (a group cannot be its own ancestor). Fields that already failed a
 * rule are skipped. Locks the account's group tree first when a parent is being set.
 */
async function referenceErrors(
  tx: Db,
  store: Store,
  accountId: number,
  self: number | undefined,
  checked: { values: { KeywordId?: number; ParentId?: number }; failed(field: 'KeywordId' | 'ParentId'): boolean },
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const { KeywordId, ParentId } = checked.values;
  if (KeywordId !== undefined && KeywordId !== 0 && !checked.failed('KeywordId')) {
    const id = rowId(KeywordId);
    if (id === null || !(await groups.keywordReservationExists(tx, accountId, id)))
      errors.push({ field: 'KeywordId', message: messages.invalid('KeywordId') });
  }
  if (ParentId !== undefined && ParentId !== 0 && !checked.failed('ParentId')) {
    const id = rowId(ParentId);
    let ok = false;
    if (id !== null) {
      await groups.lockGroupTree(tx, store.dialect, accountId);
      const path = await groups.ancestorIds(tx, accountId, id);
      ok = path.length > 0 && (self === undefined || !path.includes(self));
    }
    if (!ok) errors.push({ field: 'ParentId', message: messages.invalid('ParentId') });
  }
  return errors;
}

/**
 * Lists one page of the account's groups by Id ascending (API.md §10.3 `index`, API.md §5).
 * @param search msgsvc's `Search` query parameter as received: when not blank, only the groups
 *   whose `fname` contains it (ASCII letters in any case; src/domain/search.ts, src/store/search.ts).
 * @returns the total and a fetcher of one page (rows with their member ids), for `ctx.paginate`.
 * @throws ValidationFailedError (422 on `Search`: over 255 characters, not a string).
 */
export async function groupsPage(
  store: Store,
  accountId: number,
  search?: unknown,
): Promise<{ total: number; fetch: (limit: number, offset: number) => Promise<GroupRow[]> }> {
  const text = readSearch(search);
  return {
    total: await groups.countGroups(store.db, accountId, text),
    fetch: (limit, offset) => groups.listGroups(store.db, accountId, limit, offset, text),
  };
}

/**
 * One group of the account (API.md §10.3 `view`).
 * @param id canonical integer text of the `id` query parameter.
 * @throws NotFoundError `Object not found: {id}` when the account has no such group (another account's included).
 */
export async function viewGroup(store: Store, accountId: number, id: string): Promise<GroupRow> {
  return loadOr404(id, (n) => (n > groups.MAX_ROW_ID ? Promise.resolve(undefined) : groups.findGroup(store.db, accountId, n)));
}

/**
 * Creates a group (API.md §10.3 `create`): `fname` required, `fname`/`fnote` 3 to 255
 * characters, `KeywordId` 0 or a keyword reservation of the account, `ParentId` 0 or a group of the
 * account. Absent (or null, "") fnote, KeywordId, ParentId give "" / 0 / 0.
 * @throws ValidationFailedError with the first error of each field (`Keyword Id is invalid.`,
 *   `Parent Id is invalid.` for bad references).
 */
export async function createGroup(store: Store, accountId: number, input: Input): Promise<GroupRow> {
  const checked = validate(input, GROUP_RULES);
  return inTransaction(store, async (tx) => {
    const errors = [...checked.errors, ...(await referenceErrors(tx, store, accountId, undefined, checked))];
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const { fname, fnote, KeywordId, ParentId } = checked.values;
    const id = await groups.insertGroup(
      tx,
      accountId,
      { name: fname!, note: fnote ?? '', keywordId: KeywordId ?? 0, parentId: ParentId ?? 0 },
      nowSeconds(),
    );
    return (await groups.findGroup(tx, accountId, id))!;
  });
}

/**
 * API.md §10.3: renames the group (fname required, 3 to 255
 * characters), and changes only the other fields sent: `fnote` (kept when absent; null or ""
 * clears it, stored "", as Yii2's length rule skips an empty value: docs/API.md §4.6),
 * `KeywordId` (0 clears it), `ParentId` (0 clears it; not the group itself nor one of its
 * descendants: a group cannot be its own ancestor).
 * @param id canonical integer text of the `id` query parameter.
 * @throws NotFoundError when the account has no group `id` (before any 422, API.md §1.5).
 * @throws ValidationFailedError with the first error of each field.
 */
export async function updateGroup(store: Store, accountId: number, id: string, input: Input): Promise<GroupRow> {
  const checked = validate(input, GROUP_RULES);
  return inTransaction(store, async (tx) => {
    const groupId = await findGroupOr404(tx, accountId, id);
    const errors = [...checked.errors, ...(await referenceErrors(tx, store, accountId, groupId, checked))];
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const { fname, fnote, KeywordId, ParentId } = checked.values;
    await groups.changeGroup(
      tx,
      accountId,
      groupId,
      {
        name: fname!,
        // Sent blank (null, "") it is stored blank; a bad value has already failed.
        ...(Object.hasOwn(input, 'fnote') ? { note: fnote ?? '' } : {}),
        ...(KeywordId !== undefined ? { keywordId: KeywordId } : {}),
        ...(ParentId !== undefined ? { parentId: ParentId } : {}),
      },
      nowSeconds(),
    );
    return (await groups.findGroup(tx, accountId, groupId))!;
  });
}

/**
 * Deletes a group (API.md §10.3 `delete`): its memberships go, its member contacts stay, its
 * child groups get ParentId 0.
 * @throws NotFoundError `Object not found: {id}` when the account has no such group.
 */
export async function deleteGroup(store: Store, accountId: number, id: string): Promise<void> {
  await inTransaction(store, async (tx) => {
    const groupId = await findGroupOr404(tx, accountId, id);
    await groups.lockGroupTree(tx, store.dialect, accountId);
    await groups.deleteGroup(tx, accountId, groupId, nowSeconds());
  });
}

/**
 * Adds contacts to, or removes them from, a group (API.md §10.3 `add-contacts`,
 * `remove-contacts`). `PhoneNumberIds`: required (`Phone Number Ids cannot be blank.` for absent,
 * null, "" or []), an array of 1 to 1,000 integer ids that are all contacts of the account; any
 * other value, or one id that is not the account's, rejects the whole request with
 * `Phone Number Ids is invalid.` and changes nothing. Adding a member twice or removing a
 * non-member is not an error. The ids are checked in one query and the memberships written in one
 * statement; `DateUpdated` changes only when a membership did.
 * @throws NotFoundError when the account has no group `id` (before any 422).
 * @throws ValidationFailedError as above.
 */
export async function changeMembers(
  store: Store,
  accountId: number,
  id: string,
  input: Input,
  action: 'add' | 'remove',
): Promise<GroupRow> {
  const checked = validate(input, MEMBER_RULES);
  return inTransaction(store, async (tx) => {
    const groupId = await findGroupOr404(tx, accountId, id);
    if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
    const ids = checked.values.PhoneNumberIds!;
    const invalid = new ValidationFailedError([{ field: 'PhoneNumberIds', message: messages.invalid('PhoneNumberIds') }]);
    if (ids.some((n) => rowId(n) === null)) throw invalid;
    if ((await groups.countOwnContacts(tx, accountId, ids)) !== ids.length) throw invalid;
    let changed: number;
    try {
      changed =
        action === 'add'
          ? await groups.addGroupMembers(tx, accountId, groupId, ids)
          : await groups.removeGroupMembers(tx, accountId, groupId, ids);
    } catch (err) {
      // A contact deleted since the count above: the ids are no longer all the account's.
      if (err instanceof ForeignKeyViolation) throw invalid;
      throw err;
    }
    if (changed > 0) await groups.touchGroup(tx, accountId, groupId, nowSeconds());
    return (await groups.findGroup(tx, accountId, groupId))!;
  });
}
