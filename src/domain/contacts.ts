import type { CountryCode } from 'libphonenumber-js';
import { inTransaction, type Store } from '../store/db.ts';
import * as contacts from '../store/repositories/contacts.ts';
import type { ContactFilter, NewContact } from '../store/repositories/contacts.ts';
import type { ContactFields, ContactRow } from '../records/contacts.ts';
import * as groups from '../store/repositories/groups.ts';
import { UniqueViolation } from '../store/errors.ts';
import { NotFoundError, ValidationFailedError, type FieldError } from './errors.ts';
import { findOr404, loadOr404 } from './find.ts';
import { normalisePhone } from './phone.ts';
import { nowSeconds } from '../lib/time.ts';
import { canonicalInteger, defineRules, isBlank, isEmpty, messages, toId, validate, type Input } from './validation.ts';
import { emitEvent } from './webhooks.ts';
import { SEARCH_RULE, trimmedSearch } from './search.ts';
import { recordOptOut, type WriteClient } from './consent.ts';

/**
 * Finds the account's contact by phone number, in any common writing of it (`+15551234567`,
 * `15551234567`, `5551234567`, `(555) 123-4567` with region US).
 * @throws ValidationFailedError "Number cannot be blank." / "Number is invalid." (API.md: valid phone number)
 * @throws NotFoundError `Object not found: {number as sent}` when the account has no such contact.
 */
export async function findContact(store: Store, accountId: number, number: string, region: CountryCode): Promise<ContactRow> {
  if (isBlank(number)) throw new ValidationFailedError([{ field: 'number', message: 'Number cannot be blank.' }]);
  const phone = normalisePhone(number, region);
  if (!phone) throw new ValidationFailedError([{ field: 'number', message: messages.invalid('number') }]);
  const row = await contacts.findContactByE164(store.db, accountId, phone.e164);
  if (!row) throw new NotFoundError(number);
  return row;
}

/**
 * The write rules of API.md §10.2, requireds first, then in the order of its table: Number,
 * FirstName, LastName, City, Email, Zip, BirthDay, OptedOut, GroupIds. The rules that need the
 * database (Number unique in the account, GroupIds the account's groups, OptedOut not cleared)
 * run after these, inside the transaction.
 */
export const CONTACT_RULES = defineRules([
  { field: 'Number', rule: 'required' },
  { field: 'Number', rule: 'phone' },
  { field: 'FirstName', rule: 'string', max: 255 },
  { field: 'LastName', rule: 'string', max: 255 },
  { field: 'City', rule: 'string', max: 255 },
  { field: 'Email', rule: 'string', max: 255 },
  { field: 'Email', rule: 'email' },
  { field: 'Zip', rule: 'string', max: 32 },
  { field: 'BirthDay', rule: 'date' },
  { field: 'OptedOut', rule: 'in', values: [0, 1] },
  { field: 'GroupIds', rule: 'ids' },
]);
/** As CONTACT_RULES, for an update that leaves `Number` out (a required field may be left out, not sent blank). */
const UPDATE_RULES_WITHOUT_NUMBER = CONTACT_RULES.slice(1) as unknown as typeof CONTACT_RULES;

/** The writable fields in rule order (API.md §10.2 table): errors are listed in this order. */
export const CONTACT_FIELDS = ['Number', 'FirstName', 'LastName', 'City', 'Email', 'Zip', 'BirthDay', 'OptedOut', 'GroupIds'] as const;
const FIELD_RANK = new Map<string, number>(CONTACT_FIELDS.map((f, i) => [f, i]));

/** `Opted Out can only be cleared by the contact texting START.` (API.md §10.2). */
export const OPT_OUT_CLEAR_MESSAGE = 'Opted Out can only be cleared by the contact texting START.';

/** The first error of each field, in rule order (API.md §4.4). */
function inRuleOrder(errors: FieldError[]): FieldError[] {
  return [...errors].sort((a, b) => (FIELD_RANK.get(a.field) ?? 99) - (FIELD_RANK.get(b.field) ?? 99));
}

/** What a validated body changes: only the fields it holds (null or "" clear a field). */
interface ContactChange {
  /** The normalised number and the text as sent (for the "already taken" message). */
  phone?: { e164: string; digits: string; sent: string };
  firstName?: string;
  lastName?: string;
  city?: string;
  email?: string;
  zip?: string;
  birthday?: string | null;
  optedOut?: number;
  /** The new memberships ([] clears them). */
  groupIds?: number[];
}

/** Runs the pure rules over a body; returns the errors and the change of the fields that passed. */
function readChange(input: Input, rules: typeof CONTACT_RULES, region: CountryCode): { errors: FieldError[]; change: ContactChange } {
  const checked = validate(input, rules, { region });
  const v = checked.values;
  const change: ContactChange = {};
  const sent = (field: string) => Object.hasOwn(input, field) && !checked.failed(field as never);
  if (v.Number) change.phone = { ...v.Number, sent: String(input.Number) };
  // Strings: "" and null clear them (stored ""); unknown keys are ignored.
  const text = (field: 'FirstName' | 'LastName' | 'City' | 'Email' | 'Zip') => (sent(field) ? (v[field] ?? '') : undefined);
  const assign = <K extends keyof ContactChange>(key: K, value: ContactChange[K] | undefined) => {
    if (value !== undefined) change[key] = value;
  };
  assign('firstName', text('FirstName'));
  assign('lastName', text('LastName'));
  assign('city', text('City'));
  assign('email', text('Email'));
  assign('zip', text('Zip'));
  if (sent('BirthDay')) change.birthday = v.BirthDay ?? null;
  if (v.OptedOut !== undefined) change.optedOut = v.OptedOut;
  if (sent('GroupIds')) change.groupIds = isEmpty(input.GroupIds) ? [] : (v.GroupIds ?? []);
  return { errors: checked.errors, change };
}

/** The rules that need the database: Number not taken by another contact, GroupIds all the account's. */
async function databaseErrors(
  tx: Parameters<typeof contacts.findContactFieldsByE164>[0],
  accountId: number,
  change: ContactChange,
  selfId: number,
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  if (change.phone) {
    const other = await contacts.findContactFieldsByE164(tx, accountId, change.phone.e164);
    if (other && other.id !== selfId) errors.push({ field: 'Number', message: messages.taken('Number', change.phone.sent) });
  }
  if (change.groupIds && change.groupIds.length > 0) {
    const owned = await contacts.ownedGroupIds(tx, accountId, change.groupIds);
    if (change.groupIds.some((id) => !owned.has(id))) errors.push({ field: 'GroupIds', message: messages.invalid('GroupIds') });
  }
  return errors;
}

/** The stored fields after applying `change` to `base`. */
function merged(base: NewContact, change: ContactChange): NewContact {
  return {
    number: change.phone?.digits ?? base.number,
    e164: change.phone?.e164 ?? base.e164,
    optedOut: change.optedOut ?? base.optedOut,
    firstName: change.firstName ?? base.firstName,
    lastName: change.lastName ?? base.lastName,
    birthday: change.birthday !== undefined ? change.birthday : base.birthday,
    email: change.email ?? base.email,
    zip: change.zip ?? base.zip,
    city: change.city ?? base.city,
  };
}

/** True when `next` stores what `base` holds (the E.164 form follows the number). */
function sameFields(base: NewContact, next: NewContact): boolean {
  return (
    base.number === next.number &&
    base.optedOut === next.optedOut &&
    base.firstName === next.firstName &&
    base.lastName === next.lastName &&
    base.birthday === next.birthday &&
    base.email === next.email &&
    base.zip === next.zip &&
    base.city === next.city
  );
}

/**
 * True when writing `next` over the stored `row` would change none of its fields: such an update
 * saves nothing and leaves DateUpdated as it was (docs/API.md §4.6). Shared with contacts/import.
 */
export function changesNoField(row: ContactFields, next: NewContact): boolean {
  return sameFields(fieldsOf(row, ''), next);
}

/** A stored row as the writable fields. */
function fieldsOf(row: ContactFields & { number_e164?: string }, e164: string): NewContact {
  return {
    number: row.number,
    e164,
    optedOut: row.opted_out,
    firstName: row.first_name,
    lastName: row.last_name,
    birthday: row.birthday,
    email: row.email,
    zip: row.zip,
    city: row.city,
  };
}

/** Turns a unique violation on (account_id, number_e164) into the 422 on Number. */
function takenOnRace(err: unknown, change: ContactChange): never {
  if (err instanceof UniqueViolation && change.phone) {
    throw new ValidationFailedError([{ field: 'Number', message: messages.taken('Number', change.phone.sent) }]);
  }
  throw err;
}

/**
 * contacts/create (API.md §10.2): adds a contact from a JSON or form body.
 * Fields: `Number` (required, a phone number read like contacts/find, with `region` for national
 * numbers; stored as E.164 digits), FirstName/LastName/City (≤ 255), Email (≤ 255, an address),
 * Zip (≤ 32), BirthDay (`YYYY-MM-DD`), OptedOut (0 or 1), GroupIds (the account's group ids).
 * Created with OptedOut 1, it gets its consent ledger's first entry (src/domain/consent.ts:
 * Source `api`, or `console` when `client` is the console; Detail `contacts/create`) in the same
 * transaction.
 * @returns the new contact with its group and custom field ids.
 * @throws ValidationFailedError (422) with the first error of each field in rule order, including
 *   `Number "{as sent}" has already been taken.` (also when a concurrent create wins the unique
 *   index contacts_account_e164_uq) and `Group Ids is invalid.`
 */
export async function createContact(
  store: Store,
  accountId: number,
  input: Input,
  region: CountryCode,
  client: WriteClient = 'api',
): Promise<ContactRow> {
  const { errors, change } = readChange(input, CONTACT_RULES, region);
  return inTransaction(store, async (tx) => {
    const all = inRuleOrder([...errors, ...(await databaseErrors(tx, accountId, change, 0))]);
    if (all.length > 0) throw new ValidationFailedError(all);
    const phone = change.phone!;
    const empty: NewContact = {
      number: phone.digits,
      e164: phone.e164,
      optedOut: 0,
      firstName: '',
      lastName: '',
      birthday: null,
      email: '',
      zip: '',
      city: '',
    };
    const now = nowSeconds();
    let id: number;
    try {
      id = await contacts.insertContact(tx, accountId, merged(empty, change), now);
    } catch (err) {
      takenOnRace(err, change);
    }
    if (change.groupIds && change.groupIds.length > 0) await contacts.setContactGroups(tx, accountId, id, change.groupIds, false);
    const created = (await contacts.findContact(tx, accountId, id))!;
    // API.md §12: OptedOut set through the API; API.md §10.2: its consent ledger entry, in this transaction.
    if (created.opted_out === 1) {
      await recordOptOut(tx, accountId, id, client, 'contacts/create', now);
      await emitEvent(tx, accountId, 'contact.opted_out', created, now);
    }
    return created;
  });
}

/**
 * contacts/update?id= (API.md §10.2): only the fields sent change; `Number` may be left out
 * but not sent blank (`Number cannot be blank.`); `GroupIds` replaces the memberships ([] or null
 * clears them); `BirthDay` "" or null clears it. OptedOut 0 → 1 is always allowed, 1 → 0 refused.
 * An update whose every value equals the stored one (GroupIds: the same set of groups) saves
 * nothing and leaves DateUpdated as it was (docs/API.md §4.6).
 * The body is checked first (no database), then the record is looked up (404), then the 422 is
 * thrown (API.md §1.5).
 * OptedOut 0 → 1 appends an entry to the consent ledger (src/domain/consent.ts: Source `api`, or
 * `console` when `client` is the console; Detail `contacts/update`) in the same transaction.
 * @param id canonical integer text of the `id` query parameter.
 * @throws NotFoundError `Object not found: {id}` when the account has no contact `id`.
 * @throws ValidationFailedError with the first error of each field in rule order, including
 *   `Opted Out can only be cleared by the contact texting START.`
 */
export async function updateContact(
  store: Store,
  accountId: number,
  id: string,
  input: Input,
  region: CountryCode,
  client: WriteClient = 'api',
): Promise<ContactRow> {
  const rules = Object.hasOwn(input, 'Number') ? CONTACT_RULES : UPDATE_RULES_WITHOUT_NUMBER;
  const { errors, change } = readChange(input, rules, region);
  return inTransaction(store, async (tx) => {
    const row = await loadOr404(id, (n) => contacts.findContactFields(tx, accountId, n));
    const all = [...errors, ...(await databaseErrors(tx, accountId, change, row.id))];
    if (row.opted_out === 1 && change.optedOut === 0) all.push({ field: 'OptedOut', message: OPT_OUT_CLEAR_MESSAGE });
    if (all.length > 0) throw new ValidationFailedError(inRuleOrder(all));
    const current = fieldsOf(row, '');
    const e164 = change.phone?.e164 ?? `+${row.number}`;
    const next = merged({ ...current, e164 }, change);
    // A GroupIds that changes the memberships is a change of the contact: its DateUpdated moves.
    const groupsChanged = change.groupIds !== undefined && (await contacts.setContactGroups(tx, accountId, row.id, change.groupIds));
    // An update whose every value equals the stored one saves nothing: DateUpdated stays as it was.
    if (groupsChanged || !sameFields(current, next)) {
      try {
        await contacts.updateContact(tx, accountId, row.id, next, nowSeconds());
      } catch (err) {
        takenOnRace(err, change);
      }
    }
    const updated = (await contacts.findContact(tx, accountId, row.id))!;
    // API.md §12: OptedOut set through the API (0 → 1; 1 → 0 is refused above); API.md §10.2: its
    // consent ledger entry, in this transaction.
    if (updated.opted_out !== row.opted_out) {
      await recordOptOut(tx, accountId, row.id, client, 'contacts/update', updated.updated_at);
      await emitEvent(tx, accountId, updated.opted_out === 1 ? 'contact.opted_out' : 'contact.opted_in', updated, updated.updated_at);
    }
    return updated;
  });
}

/**
 * contacts/view?id=: one contact of the account.
 * @throws NotFoundError `Object not found: {id}` (also for another account's id).
 */
export async function viewContact(store: Store, accountId: number, id: string): Promise<ContactRow> {
  return loadOr404(id, (n) => contacts.findContact(store.db, accountId, n));
}

/**
 * contacts/delete?id=: deletes the contact; its group memberships, custom field entries and
 * consent ledger go with it (foreign keys ON DELETE CASCADE; the only way ledger entries go,
 * API.md §10.2). Messages in the log keep their phone number.
 * @throws NotFoundError `Object not found: {id}`.
 */
export async function deleteContact(store: Store, accountId: number, id: string): Promise<void> {
  await inTransaction(store, async (tx) => {
    const n = await findOr404(id, (n) => contacts.contactExists(tx, accountId, n));
    await contacts.deleteContact(tx, accountId, n);
  });
}

/** Filters of contacts/index as validated: absent ones are undefined. */
export interface ContactListQuery {
  /** `GroupId` as sent (canonical integer text), when given. */
  groupId?: string;
  optedOut?: number;
  /** msgsvc's `Search`, trimmed, when not empty (src/domain/search.ts). */
  search?: string;
}

const FILTER_RULES = defineRules([{ field: 'GroupId', rule: 'integer' }, { field: 'OptedOut', rule: 'in', values: [0, 1] }, SEARCH_RULE]);

/**
 * Reads the contacts/index filters (API.md §10.2): `GroupId` an integer (`Group Id must be an
 * integer.`), `OptedOut` 0 or 1 (`Opted Out is invalid.`, or `… must be an integer.`), and
 * msgsvc's `Search` (trimmed, at most 255 characters: src/domain/search.ts). Empty values are no
 * filter; the errors come in that order.
 * @throws ValidationFailedError (422, API.md §4.4 list).
 */
export function readContactFilters(query: { GroupId?: unknown; OptedOut?: unknown; Search?: unknown }): ContactListQuery {
  const checked = validate({ ...query, Search: trimmedSearch(query.Search) }, FILTER_RULES);
  if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
  const out: ContactListQuery = {};
  if (checked.values.GroupId !== undefined) out.groupId = canonicalInteger(query.GroupId)!;
  if (checked.values.OptedOut !== undefined) out.optedOut = checked.values.OptedOut;
  if (checked.values.Search !== undefined) out.search = checked.values.Search;
  return out;
}

/**
 * The contacts/index list: its total and a page fetcher, for ctx.paginate. A `GroupId` that is not
 * one of the account's groups gives an empty list (it never reveals another account's group).
 * `Search` keeps the contacts whose FirstName, LastName or Email contains the text (ASCII letters
 * in any case), or whose Number contains its digits when it has at least three
 * (src/store/search.ts); it combines with the other filters.
 */
export async function contactList(
  store: Store,
  accountId: number,
  query: ContactListQuery,
): Promise<{
  total: number;
  fetch: (limit: number, offset: number) => Promise<ContactRow[]>;
  /** The same page as JSON text of its records with times in UTC, where the store builds it (repositories/contacts listContactsJson). */
  json: (limit: number, offset: number) => Promise<string | undefined>;
}> {
  const filter: ContactFilter = {};
  if (query.optedOut !== undefined) filter.optedOut = query.optedOut;
  if (query.search !== undefined) filter.search = query.search;
  if (query.groupId !== undefined) {
    const groupId = toId(query.groupId);
    if (groupId === null || !(await groups.groupExists(store.db, accountId, groupId)))
      return { total: 0, fetch: () => Promise.resolve([]), json: () => Promise.resolve('[]') };
    filter.groupId = groupId;
  }
  const total = await contacts.countContacts(store.db, accountId, filter);
  return {
    total,
    fetch: (limit, offset) => contacts.listContacts(store.db, accountId, filter, limit, offset),
    json: (limit, offset) => contacts.listContactsJson(store.db, accountId, filter, limit, offset),
  };
}
