import { sql } from 'kysely';
import { isPostgres, prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * The SQL of personalised messages (API.md §10.6 merge fields, tracked links): the contact values
 * a merge field reads, and the `message_links` rows of a message sent with `ShortenLinks`. Every
 * query is scoped to the account.
 */

/** What merge fields read of a contact. */
export interface MergeContact {
  id: number;
  number: string;
  first_name: string;
  last_name: string;
  city: string;
  zip: string;
  email: string;
}

const MERGE_COLUMNS = ['id', 'number', 'first_name', 'last_name', 'city', 'zip', 'email'] as const;

const contactByE164 = prepareQuery((db, accountId: number, e164: string) =>
  db.selectFrom('contacts').select(MERGE_COLUMNS).where('account_id', '=', accountId).where('number_e164', '=', e164),
);

/** The account's contact with this E.164 number (`+` and digits), if any. */
export async function findMergeContact(db: Db, accountId: number, e164: string): Promise<MergeContact | undefined> {
  return contactByE164.first(db, accountId, e164);
}

/** The texts of a JSON array parameter (case-folded names, digits…), as a one-column subquery. */
export function jsonTexts(db: Parameters<Parameters<typeof prepareQuery>[0]>[0], json: unknown) {
  return isPostgres(db)
    ? sql<string>`(select value from json_array_elements_text(cast(${json} as json)) as texts(value))`
    : sql<string>`(select value from json_each(${json}))`;
}

const entriesOfContact = prepareQuery((db, accountId: number, contactId: number, nameKeysJson: string) =>
  db
    .selectFrom('custom_field_entries as e')
    .innerJoin('custom_fields as f', (j) => j.onRef('f.account_id', '=', 'e.account_id').onRef('f.id', '=', 'e.custom_field_id'))
    .select(['f.name_key as name_key', 'e.entry as entry'])
    .where('e.account_id', '=', accountId)
    .where('e.contact_id', '=', contactId)
    .where('f.name_key', 'in', jsonTexts(db, nameKeysJson)),
);

/**
 * The contact's entries of the custom fields with these case-folded names (caseKey), keyed by
 * that name; a field the account lacks, or one the contact has no entry of, is absent.
 */
export async function contactEntries(
  db: Db,
  accountId: number,
  contactId: number,
  nameKeys: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (nameKeys.length === 0) return out;
  for (const r of await entriesOfContact.all(db, accountId, contactId, JSON.stringify(nameKeys))) out.set(r.name_key, r.entry);
  return out;
}

const membersForMerge = prepareQuery((db, accountId: number, groupId: number) =>
  db
    .selectFrom('group_members as gm')
    .innerJoin('contacts as c', (j) => j.onRef('c.account_id', '=', 'gm.account_id').onRef('c.id', '=', 'gm.contact_id'))
    .select([
      'c.id as id',
      'c.number as number',
      'c.first_name as first_name',
      'c.last_name as last_name',
      'c.city as city',
      'c.zip as zip',
      'c.email as email',
    ])
    .where('gm.group_id', '=', groupId)
    .where('gm.account_id', '=', accountId)
    .where('c.opted_out', '=', 0)
    .orderBy('gm.contact_id'),
);

/**
 * The members of the account's group who have not opted out, with what merge fields read, in
 * contact id order (the order `insertGroupMessages` queues them in): one query.
 */
export function groupMergeContacts(db: Db, accountId: number, groupId: number): Promise<MergeContact[]> {
  return membersForMerge.all(db, accountId, groupId);
}

const entriesOfGroup = prepareQuery((db, accountId: number, groupId: number, nameKeysJson: string) =>
  db
    .selectFrom('custom_field_entries as e')
    .innerJoin('custom_fields as f', (j) => j.onRef('f.account_id', '=', 'e.account_id').onRef('f.id', '=', 'e.custom_field_id'))
    .innerJoin('group_members as gm', (j) => j.onRef('gm.account_id', '=', 'e.account_id').onRef('gm.contact_id', '=', 'e.contact_id'))
    .select(['e.contact_id as contact_id', 'f.name_key as name_key', 'e.entry as entry'])
    .where('gm.group_id', '=', groupId)
    .where('gm.account_id', '=', accountId)
    .where('f.name_key', 'in', jsonTexts(db, nameKeysJson)),
);

/**
 * The entries of the custom fields with these case-folded names of every member of the group
 * (one query): contact id → (name key → entry).
 */
export async function groupEntries(
  db: Db,
  accountId: number,
  groupId: number,
  nameKeys: readonly string[],
): Promise<Map<number, Map<string, string>>> {
  const out = new Map<number, Map<string, string>>();
  if (nameKeys.length === 0) return out;
  for (const r of await entriesOfGroup.all(db, accountId, groupId, JSON.stringify(nameKeys))) {
    let m = out.get(r.contact_id);
    if (!m) out.set(r.contact_id, (m = new Map<string, string>()));
    m.set(r.name_key, r.entry);
  }
  return out;
}

// ------------------------------------------------------------------ links

/**
 * Inserts links of messages; a row whose code is taken (the unique constraint on `code`) is not
 * inserted: `on conflict do nothing`, so a collision never aborts the transaction (PostgreSQL).
 * `rowsJson` is a JSON array of `[messageId, code, url]`.
 */
const insertLinkRows = prepareQuery((db, accountId: number, now: number, rowsJson: string) => ({
  compile: () =>
    (isPostgres(db)
      ? sql<{ code: string }>`insert into message_links (account_id, message_id, code, url, created_at)
          select cast(${accountId} as integer), cast(r.v->>0 as integer), r.v->>1, r.v->>2, cast(${now} as bigint)
          from json_array_elements(cast(${rowsJson} as json)) with ordinality as r(v, i) order by r.i
          on conflict (code) do nothing returning code`
      : sql<{ code: string }>`insert into message_links (account_id, message_id, code, url, created_at)
          select ${accountId}, json_extract(r.value, '$[0]'), json_extract(r.value, '$[1]'), json_extract(r.value, '$[2]'), ${now}
          from json_each(${rowsJson}) as r where true order by r.key
          on conflict (code) do nothing returning code`
    ).compile(db),
}));

/** A link to store: `[messageId, code, url]`. */
export type LinkRow = readonly [number, string, string];

/**
 * Inserts the links of the account's messages, in chunks of 5,000; `now` in epoch seconds.
 * @returns the rows that were NOT inserted because their code is taken (by an earlier link, or by
 *   an earlier row of `rows`).
 */
export async function insertLinks(db: Db, accountId: number, rows: readonly LinkRow[], now: number): Promise<LinkRow[]> {
  const refused: LinkRow[] = [];
  for (let i = 0; i < rows.length; i += 5000) {
    const chunk = rows.slice(i, i + 5000);
    const inserted = new Set(await insertLinkRows.column(db, accountId, now, JSON.stringify(chunk)));
    // Rows go in in order: of two rows with one code, the first is the one inserted.
    for (const r of chunk) {
      if (inserted.has(r[1])) inserted.delete(r[1]);
      else refused.push(r);
    }
  }
  return refused;
}

const messageText = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('messages').select('message').where('account_id', '=', accountId).where('id', '=', id),
);
const setMessageText = prepareQuery((db, accountId: number, id: number, message: string) =>
  db.updateTable('messages').set({ message }).where('account_id', '=', accountId).where('id', '=', id),
);

/** The text of the account's message `id`, if any. */
export async function findMessageText(db: Db, accountId: number, id: number): Promise<string | undefined> {
  return (await messageText.first(db, accountId, id))?.message;
}

/** Rewrites the text of the account's message `id` (a link code replaced by another of the same length). */
export async function changeMessageText(db: Db, accountId: number, id: number, message: string): Promise<void> {
  await setMessageText.run(db, accountId, id, message);
}
