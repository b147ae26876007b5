import { bulkTransaction, withBulkSettings } from '../store/bulk.ts';
import { caseKey } from './text.ts';
import { inTransaction, type Store } from '../store/db.ts';
import * as accounts from '../store/repositories/accounts.ts';
import * as numbers from '../store/repositories/numbers.ts';
import { issueToken } from './accounts.ts';
import { nowSeconds } from '../lib/time.ts';
import { DIRECTION_OUTBOUND, LOG_STATUS } from '../records/statuses.ts';

/**
 * The load generator behind `msgsvc generate` and `npm run bench`: ONE account holding N
 * contacts with group memberships, custom field entries and scheduled messages, deterministic
 * apart from ids and times, so that a benchmark can address any record without asking for it.
 *
 * Shape for N contacts:
 * - contact i has the number +1 200 xxx xxxx = `contactDigits(i)` (E.164 digits; valid US lengths);
 * - ceil(N / 100) groups ("segments"): contact i is in group i mod G, and every third contact also
 *   in group (7i + 1) mod G, so each group holds about 133 contacts (a realistic segment, and the
 *   size of the PhoneNumberIds list that groups/update returns);
 * - 5 custom fields; contact i has an entry for field 1 when i is even, field 2 when i mod 3 = 0,
 *   field 3 when i mod 5 = 0 (about 1.03 entries per contact);
 * - `messages` scheduled single messages (default N), one in five an MMS, statuses 1-3 in turn;
 * - `logMessages` messages in the message log (default 0): outbound SMS from 55155 to contact
 *   m mod N, Delivered, sent over the past days, one credit each (what months of sending leave);
 * - the demo account's five numbers (55155 and 15550100001 Active), 1,000,000 credits, and a token.
 */

export interface GenerateOptions {
  contacts: number;
  /** Scheduled messages to create (default: as many as contacts). */
  messages?: number;
  /** Delivered messages to put in the message log (default 0). */
  logMessages?: number;
  name?: string;
}

export interface GenerateProgress {
  /** Contacts (with their memberships, entries and messages) written so far. */
  done: number;
  total: number;
}

/** What was generated: enough for a client to address every kind of record. */
export interface GeneratedAccount {
  accountId: number;
  token: string;
  contacts: number;
  messages: number;
  groups: number;
  customFields: number;
  /** Rows per kind, as written. */
  rows: { contacts: number; groupMembers: number; customFieldEntries: number; scheduledMessages: number; logMessages: number };
  /** An Active number of the account (keyword/reserve). */
  activeNumber: string;
  /** A group of typical size (groups/update). */
  group: { id: number; members: number };
  /** A custom field entry and the field and contact it holds (custom-contact-fields-entry/update). */
  entry: { id: number; customFieldId: number; contactId: number };
  /** Ids of the first (up to) 1,000 contacts (groups/add-contacts). */
  contactIds: number[];
  seconds: number;
}

/** E.164 digits (without `+`) of generated contact `i`. */
export function contactDigits(i: number): string {
  return String(12_000_000_000 + i);
}

const FIRST = [
  'Olivia',
  'Liam',
  'Emma',
  'Noah',
  'Ava',
  'Elijah',
  'Sophia',
  'James',
  'Isabella',
  'Lucas',
  'Mia',
  'Mateo',
  'Amelia',
  'Benjamin',
  'Harper',
  'Henry',
  'Chloé',
  'José',
];
const LAST = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'García',
  'Miller',
  'Davis',
  'Rodríguez',
  'Martinez',
  "O'Brien",
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
];
const CITIES: [string, string][] = [
  ['Austin', '78701'],
  ['Portland', '97201'],
  ['Denver', '80202'],
  ['Chicago', '60601'],
  ['Boston', '02108'],
  ['Seattle', '98101'],
  ['Miami', '33101'],
];
const FIELDS = ['Favorite Color', 'Loyalty Tier', 'Shoe Size', 'Preferred Store', 'Language'];
const VALUES = ['Blue', 'Gold', '42', 'Downtown', 'English', 'Green', 'Silver', '38', 'Airport', 'Español'];
const TEXTS = [
  'Hi! Our spring sale starts Friday. Reply STOP to opt out.',
  'Your appointment is confirmed for tomorrow at 10:00.',
  'Flash deal: 20% off everything today only & free shipping > $50.',
  'Thanks for joining our list! Msg&data rates may apply.',
];

/** Contacts written per transaction (with their memberships, entries and messages). */
const CHUNK = 10_000;

/**
 * Creates a NEW account with `contacts` contacts and the related rows described above, in
 * transactions of 10,000 contacts. Nothing else may use the store while it runs.
 * @param onProgress called after each transaction.
 */
export async function generateAccount(
  store: Store,
  options: GenerateOptions,
  onProgress: (p: GenerateProgress) => void = () => {},
): Promise<GeneratedAccount> {
  return withBulkSettings(store, () => generate(store, options, onProgress));
}

async function generate(store: Store, options: GenerateOptions, onProgress: (p: GenerateProgress) => void): Promise<GeneratedAccount> {
  const started = performance.now();
  const total = options.contacts;
  const messageCount = options.messages ?? total;
  const now = nowSeconds();
  const day = 86_400;
  const name = options.name ?? `Load test ${total} contacts`;

  const accountId = await inTransaction(store, async (tx) => {
    const id = await accounts.createAccount(tx, name, now);
    await accounts.changeCredits(tx, id, 1_000_000, 'set', now, { type: 'topup', note: 'Load test account' });
    await numbers.insertNumber(tx, id, '55155', 0, null, now);
    await numbers.insertNumber(tx, id, '15550100001', 0, null, now);
    await numbers.insertNumber(tx, id, '15550100002', 1, null, now);
    await numbers.insertNumber(tx, id, '15550100003', 301, now - 3 * day, now);
    await numbers.insertNumber(tx, id, '15550100004', 302, now - 40 * day, now);
    return id;
  });

  const groupCount = Math.max(1, Math.ceil(total / 100));
  const { groupIds, fieldIds } = await bulkTransaction(store, async (w) => {
    const groupRows = [];
    for (let g = 0; g < groupCount; g++) {
      groupRows.push({
        account_id: accountId,
        name: `Segment ${String(g + 1).padStart(6, '0')}`,
        note: `Contacts of segment ${g + 1}`,
        keyword_id: 0,
        parent_id: 0,
        created_at: now - 30 * day,
        updated_at: now - 30 * day,
      });
    }
    const groups = await w.insertReturning('groups', groupRows, ['id', 'name']);
    const byName = new Map(groups.map((g) => [g.name, g.id]));
    const fieldRows = FIELDS.map((f) => ({
      account_id: accountId,
      name: f,
      name_key: caseKey(f),
      created_at: now - 20 * day,
      updated_at: now - 20 * day,
    }));
    const fields = await w.insertReturning('custom_fields', fieldRows, ['id', 'name']);
    const fieldByName = new Map(fields.map((f) => [f.name, f.id]));
    return {
      groupIds: groupRows.map((g) => byName.get(g.name)!),
      fieldIds: FIELDS.map((f) => fieldByName.get(f)!),
    };
  });

  const rows = { contacts: 0, groupMembers: 0, customFieldEntries: 0, scheduledMessages: 0, logMessages: 0 };
  const logCount = options.logMessages ?? 0;
  const contactIds: number[] = [];
  let entrySample: GeneratedAccount['entry'] | undefined;
  const groupSizes = new Map<number, number>();
  const rounds = Math.max(total, messageCount, logCount);
  for (let from = 0; from < rounds; from += CHUNK) {
    const to = Math.min(from + CHUNK, total);
    await bulkTransaction(store, async (w) => {
      const contactRows = [];
      for (let i = from; i < to; i++) {
        const first = FIRST[i % FIRST.length]!;
        const last = LAST[(i * 7) % LAST.length]!;
        const [city, zip] = CITIES[i % CITIES.length]!;
        const digits = contactDigits(i);
        const created = now - ((i % 1000) + 1) * 3600;
        contactRows.push({
          account_id: accountId,
          number: digits,
          number_e164: `+${digits}`,
          opted_out: i % 50 === 7 ? 1 : 0,
          first_name: first,
          last_name: last,
          birthday:
            i % 4 === 3 ? null : `${1950 + (i % 50)}-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}`,
          email: i % 5 === 4 ? '' : `${first.toLowerCase().replace(/[^a-z]/g, '')}.${i}@example.com`,
          zip: i % 6 === 5 ? '' : zip,
          city: i % 6 === 5 ? '' : city,
          created_at: created,
          updated_at: created,
        });
      }
      const ids = new Map<string, number>();
      if (contactRows.length > 0) {
        for (const r of await w.insertReturning('contacts', contactRows, ['id', 'number'])) {
          ids.set(r.number, r.id);
          if (contactIds.length < 1000) contactIds.push(r.id);
        }
      }
      const members = [];
      const entries = [];
      for (let i = from; i < to; i++) {
        const contactId = ids.get(contactDigits(i))!;
        const g1 = i % groupCount;
        const g2 = (7 * i + 1) % groupCount;
        for (const g of i % 3 === 0 && g2 !== g1 ? [g1, g2] : [g1]) {
          members.push({ account_id: accountId, group_id: groupIds[g]!, contact_id: contactId });
          groupSizes.set(g, (groupSizes.get(g) ?? 0) + 1);
        }
        for (const [k, every] of [
          [0, 2],
          [1, 3],
          [2, 5],
        ] as const) {
          if (i % every !== 0) continue;
          entries.push({
            account_id: accountId,
            custom_field_id: fieldIds[k]!,
            contact_id: contactId,
            entry: VALUES[(i + k) % VALUES.length]!,
            created_at: now - 2 * day,
            updated_at: now - 2 * day,
          });
        }
      }
      if (members.length > 0) await w.insert('group_members', members);
      if (entries.length > 0) {
        if (entrySample === undefined) {
          const [first] = await w.insertReturning('custom_field_entries', entries.slice(0, 1), ['id', 'custom_field_id', 'contact_id']);
          entrySample = { id: first!.id, customFieldId: first!.custom_field_id, contactId: first!.contact_id };
          if (entries.length > 1) await w.insert('custom_field_entries', entries.slice(1));
        } else {
          await w.insert('custom_field_entries', entries);
        }
      }
      const messageRows = [];
      for (let m = from; m < Math.min(from + CHUNK, messageCount); m++) {
        const mms = m % 5 === 4;
        messageRows.push({
          account_id: accountId,
          mobile_phone: contactDigits(total > 0 ? m % total : m),
          message: mms ? 'See the new collection in the picture!' : TEXTS[m % TEXTS.length]!,
          scheduled_at: now + (m + 1) * 60,
          status_id: (m % 3) + 1,
          type_id: mms ? 2 : 1,
          mms_template_id: mms ? 100 + (m % 50) : null,
          subject: mms ? 'New collection' : '',
          created_at: now,
        });
      }
      if (messageRows.length > 0) await w.insert('scheduled_messages', messageRows);
      const logRows = [];
      for (let m = from; m < Math.min(from + CHUNK, logCount); m++) {
        // Oldest first, one a minute up to an hour ago.
        const sent = now - 3600 - (logCount - m) * 60;
        logRows.push({
          account_id: accountId,
          direction: DIRECTION_OUTBOUND,
          number: '55155',
          mobile_phone: contactDigits(total > 0 ? m % total : m),
          message: TEXTS[m % TEXTS.length]!,
          type_id: 1,
          status_id: LOG_STATUS.DELIVERED,
          segments: 1,
          credits: 1,
          error_code: '',
          created_at: sent,
          sent_at: sent,
          delivered_at: sent + 5,
          opt_out_exempt: 0,
          attempts: 1,
          carrier_message_id: `gen-${m}`,
        });
      }
      if (logRows.length > 0) await w.insert('messages', logRows);
      rows.logMessages += logRows.length;
      rows.contacts += contactRows.length;
      rows.groupMembers += members.length;
      rows.customFieldEntries += entries.length;
      rows.scheduledMessages += messageRows.length;
    });
    onProgress({ done: Math.min(from + CHUNK, rounds), total: rounds });
  }

  const { token } = await issueToken(store, accountId, 'generate');
  const sampleGroup = Math.floor(groupCount / 2);
  return {
    accountId,
    token,
    contacts: total,
    messages: messageCount,
    groups: groupCount,
    customFields: FIELDS.length,
    rows,
    activeNumber: '55155',
    group: { id: groupIds[sampleGroup]!, members: groupSizes.get(sampleGroup) ?? 0 },
    entry: entrySample ?? { id: 0, customFieldId: 0, contactId: 0 },
    contactIds,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}
