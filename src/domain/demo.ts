import type { CountryCode } from 'libphonenumber-js';
import { inTransaction, type Store } from '../store/db.ts';
import type { Db } from '../store/types.ts';
import * as accounts from '../store/repositories/accounts.ts';
import * as credits from '../store/repositories/credits.ts';
import * as contacts from '../store/repositories/contacts.ts';
import * as fields from '../store/repositories/custom-fields.ts';
import * as groups from '../store/repositories/groups.ts';
import * as media from '../store/repositories/media.ts';
import * as messageLog from '../store/repositories/message-log.ts';
import * as messages from '../store/repositories/messages.ts';
import * as numbers from '../store/repositories/numbers.ts';
import { issueToken } from './accounts.ts';
import { scheduleMessageIn } from './scheduled.ts';
import { normalisePhone } from './phone.ts';
import { nowSeconds, type Clock } from '../lib/time.ts';
import { caseKey } from './text.ts';
import { MEDIA_CHUNK_BYTES } from './media.ts';
import { smsSegments } from './segments.ts';
import { DIRECTION_INBOUND, DIRECTION_OUTBOUND, LOG_STATUS } from '../records/statuses.ts';
import { pngImage } from '../lib/sample-images.ts';
import type { ContactRecord } from '../records/contacts.ts';
import type { CustomFieldRecord, CustomFieldValueRecord } from '../records/custom-fields.ts';
import type { GroupRecord } from '../records/groups.ts';
import type { RecordMappers } from '../records/index.ts';
import type { NumberRecord } from '../records/numbers.ts';
import type { ScheduledMessageRecord } from '../records/scheduled-messages.ts';

/** Everything `msgsvc demo --json` prints: the new account, its token and its records as the API shows them. */
export interface DemoAccount {
  account: { id: number; name: string };
  token: string;
  numbers: NumberRecord[];
  contacts: ContactRecord[];
  groups: GroupRecord[];
  customFields: CustomFieldRecord[];
  customFieldEntries: CustomFieldValueRecord[];
  scheduledMessages: ScheduledMessageRecord[];
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
  'Evelyn',
  'Theodore',
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
  'Hernández',
  'Lopez',
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

/** The demo account's own numbers: every number status (API.md §9.2), two Active. */
const DEMO_NUMBERS: { number: string; status: number; blockedDaysAgo?: number }[] = [
  { number: '55155', status: 0 },
  { number: '15550100001', status: 0 },
  { number: '15550100002', status: 1 },
  { number: '15550100003', status: 301, blockedDaysAgo: 3 },
  { number: '15550100004', status: 302, blockedDaysAgo: 40 },
];

const CONTACT_COUNT = 50;

/**
 * The demo's scheduled messages, 6 hours apart in this order: six SMS, then six MMS, each to the
 * demo contact of index `contact`. Contacts whose index is 5 modulo 11 have opted out: 5 and 16
 * are two of them, so the check makes the fifth SMS and the fifth MMS Action Required (`OPTED_OUT`);
 * every other recipient can be reached, and the check approves their message.
 */
const DEMO_SCHEDULED: readonly { typeId: 1 | 2; contact: number }[] = [
  ...[0, 3, 6, 9, 5, 12].map((contact) => ({ typeId: 1 as const, contact })),
  ...[15, 18, 21, 24, 16, 30].map((contact) => ({ typeId: 2 as const, contact })),
];

/**
 * Creates a NEW account filled with realistic sample data and a token for it: numbers in all four
 * statuses, 50 contacts (some without birthday, email or city; some in two or more groups),
 * groups, custom fields with entries, and scheduled SMS and MMS (`DEMO_SCHEDULED`).
 * Deterministic apart from ids and times, so docs and tests can rely on its shape.
 *
 * The scheduled messages are made as `sms/schedule` makes them (src/domain/scheduled.ts
 * scheduleMessageIn, the same rules and the same row): 1 Pending, nothing reserved, their check due
 * at once, so the scheduler of whichever host runs it checks them within a second, as it checks one
 * made over HTTP. That check makes ten of them 3 Approved and Scheduled (their cost reserved) and
 * two, an SMS and an MMS to contacts who have opted out, 2 Action Required for that reason
 * (`OPTED_OUT`). Nothing here writes a status: the demo shows what the service does.
 *
 * With `options.history`, also a week of message history (see `demoHistory`): the first-start
 * demo and `msgsvc demo`, so the console's overview chart (API.md §10.9) is filled. The balance is
 * 2500 credits either way when the account is made; the check then reserves the approved messages'
 * cost from it.
 * @param options.now the time, epoch seconds (default: `options.clock`'s, else now): with it,
 *   everything but ids and the token is fixed.
 * @param options.clock the clock of the scheduled messages' rules (DateTime in the future, their
 *   check due now): the app's (tests pass their manual clock); default a clock stopped at `now`.
 */
export async function createDemoAccount(
  store: Store,
  mappers: RecordMappers,
  region: CountryCode,
  name?: string,
  options: { now?: number; history?: boolean; clock?: Clock } = {},
): Promise<DemoAccount> {
  const now = options.now ?? options.clock?.nowSeconds() ?? nowSeconds();
  const clock: Clock = options.clock ?? { nowMs: () => now * 1000, nowSeconds: () => now };
  const day = 86_400;
  const accountName = name ?? `Demo account ${new Date(now * 1000).toISOString().slice(0, 19).replace('T', ' ')}`;
  const seeded = await inTransaction(store, async (tx) => {
    const accountId = await accounts.createAccount(tx, accountName, now);
    await accounts.changeCredits(tx, accountId, 2500, 'set', now, { type: 'topup', note: 'Demo account' });
    const contactDigits: string[] = [];
    for (const n of DEMO_NUMBERS) {
      await numbers.insertNumber(tx, accountId, n.number, n.status, n.blockedDaysAgo ? now - n.blockedDaysAgo * day : null, now);
    }
    const contactIds: number[] = [];
    for (let i = 0; i < CONTACT_COUNT; i++) {
      const phone = normalisePhone(`+1555${String(2000000 + i * 7919).padStart(7, '0')}`, region)!;
      contactDigits.push(phone.digits);
      const [city, zip] = CITIES[i % CITIES.length]!;
      const first = FIRST[i % FIRST.length]!;
      const last = LAST[(i * 7) % LAST.length]!;
      contactIds.push(
        await contacts.insertContact(
          tx,
          accountId,
          {
            number: phone.digits,
            e164: phone.e164,
            optedOut: i % 11 === 5 ? 1 : 0,
            firstName: first,
            lastName: last,
            birthday:
              i % 4 === 3 ? null : `${1960 + (i % 40)}-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}`,
            email: i % 5 === 4 ? '' : `${first}.${last}${i}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, ''),
            zip: i % 6 === 5 ? '' : zip,
            city: i % 6 === 5 ? '' : city,
          },
          now - (CONTACT_COUNT - i) * day,
        ),
      );
    }
    const newsletter = await groups.insertGroup(
      tx,
      accountId,
      { name: 'Newsletter', note: 'Monthly news and offers', keywordId: 0, parentId: 0 },
      now - 90 * day,
    );
    const vip = await groups.insertGroup(
      tx,
      accountId,
      { name: 'VIP Customers', note: 'Early access to sales', keywordId: 0, parentId: newsletter },
      now - 60 * day,
    );
    const events = await groups.insertGroup(
      tx,
      accountId,
      { name: 'Store Events', note: 'In-store events & workshops', keywordId: 0, parentId: 0 },
      now - 30 * day,
    );
    const staff = await groups.insertGroup(
      tx,
      accountId,
      { name: 'Staff', note: 'Shift reminders', keywordId: 0, parentId: 0 },
      now - 10 * day,
    );
    await groups.insertGroup(tx, accountId, { name: 'Empty Group', note: 'No members yet', keywordId: 0, parentId: 0 }, now - day);
    for (const [i, contactId] of contactIds.entries()) {
      if (i % 2 === 0) await groups.addGroupMember(tx, accountId, newsletter, contactId);
      if (i % 5 === 0) await groups.addGroupMember(tx, accountId, vip, contactId);
      if (i % 3 === 0) await groups.addGroupMember(tx, accountId, events, contactId);
      if (i >= 45) await groups.addGroupMember(tx, accountId, staff, contactId);
    }
    const color = await fields.insertCustomField(tx, accountId, 'Favorite Color', caseKey('Favorite Color'), now - 20 * day);
    const tier = await fields.insertCustomField(tx, accountId, 'Loyalty Tier', caseKey('Loyalty Tier'), now - 20 * day);
    await fields.insertCustomField(tx, accountId, 'Shoe Size', caseKey('Shoe Size'), now - 5 * day);
    const colors = ['Blue', 'Green', 'Red', 'Purple', 'Black'];
    const tiers = ['Bronze', 'Silver', 'Gold'];
    for (const [i, contactId] of contactIds.entries()) {
      if (i % 3 === 0) await fields.insertEntry(tx, accountId, color, contactId, colors[i % colors.length]!, now - 2 * day);
      if (i % 4 === 0) await fields.insertEntry(tx, accountId, tier, contactId, tiers[i % tiers.length]!, now - day);
    }
    // MMS media and templates (API.md §10.7): two real PNGs, two templates; the MMS
    // scheduled messages below name these templates.
    const templateIds: number[] = [];
    for (const [i, [name, subject, colour]] of (
      [
        ['Spring collection', 'New collection', [46, 139, 87]],
        ['Store opening', 'Grand opening', [70, 130, 180]],
      ] as const
    ).entries()) {
      const png = pngImage(64, 48, (x, y) => [(colour[0] + x) & 255, (colour[1] + y) & 255, colour[2]]);
      const mediaId = await media.insertMedia(
        tx,
        accountId,
        { fileName: `demo-${i + 1}.png`, mimeType: 'image/png', chunkBytes: MEDIA_CHUNK_BYTES },
        now - 3 * day,
      );
      await media.insertChunk(tx, accountId, mediaId, 0, png);
      await media.finishMedia(tx, accountId, mediaId, png.length, 64, 48);
      const templateId = await media.insertTemplate(
        tx,
        accountId,
        { name, subject, message: 'See the new collection in the picture!' },
        now - 3 * day,
      );
      await media.setTemplateMedia(tx, accountId, templateId, [mediaId]);
      templateIds.push(templateId);
    }
    // The scheduled messages, through sms/schedule's own rules (see the function comment).
    const deps = { store, clock, region, timeZone: 'UTC' };
    for (const [m, s] of DEMO_SCHEDULED.entries()) {
      await scheduleMessageIn(tx, deps, accountId, {
        MobilePhone: `+${contactDigits[s.contact]!}`,
        Message:
          s.typeId === 1
            ? 'Hi {FirstName}! Our spring sale starts Friday. Reply STOP to opt out.'
            : 'See the new collection in the picture!',
        // ISO 8601 in UTC: the zone of the wall-clock forms is not read.
        DateTime: new Date((now + (m + 1) * 3600 * 6) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        Type_Id: s.typeId,
        ...(s.typeId === 2 ? { MmsTemplateId: templateIds[m % templateIds.length]!, Subject: 'New collection' } : {}),
      });
    }
    if (options.history) await insertDemoHistory(tx, accountId, contactDigits, now);
    return { accountId, contactIds, groupIds: [newsletter, vip, events, staff], fieldIds: [color, tier] };
  });
  const { token } = await issueToken(store, seeded.accountId, 'demo');
  return readDemoAccount(store, mappers, seeded.accountId, accountName, token);
}

/** One message of the demo's history (see `demoHistory`). */
export interface DemoHistoryMessage {
  direction: number;
  /** The account number's digits (sender of an outbound, recipient of an inbound). */
  number: string;
  /** The other party's digits. */
  mobilePhone: string;
  message: string;
  /** Delivered, Undelivered or Failed (outbound), Received (inbound). */
  statusId: number;
  errorCode: string;
  segments: number;
  /** What it cost when sent (segments × 1 credit, the default price); 0 for an inbound. */
  credits: number;
  createdAt: number;
  sentAt: number | null;
  deliveredAt: number | null;
}

const OUTBOUND_TEXTS = [
  'Hi {name}, your order is ready for pickup at our {city} store.',
  'Reminder: your appointment is tomorrow at 10:00. Reply C to confirm.',
  'Flash sale! 20% off everything today only. Reply STOP to opt out.',
  'Hi {name}, thanks for visiting us! How did we do? Reply 1-5.',
  'Your verification code is 482913.',
  'Hi {name}! Our spring collection has arrived: new colours, new fabrics and a few surprises. Come and see it this weekend, and bring a friend: both of you get 15% off. Reply STOP to opt out.',
  'Staff: the {city} shift starts at 08:00 tomorrow.',
];
const INBOUND_TEXTS = ['C', 'Thanks!', 'What time do you open on Saturday?', '5', 'Is the sale online too?', 'See you then 👍'];

/**
 * The demo's week of messages: for each of the 7 days before `now` (epoch seconds), 14 to 22
 * outbound texts to contacts who have not opted out (about 80% Delivered, 12% Undelivered, 8%
 * Failed) and 2 to 4 replies, at times spread over the day, all strictly before `now`. A pure
 * function of its arguments (a fixed-seed generator), so the demo is the same for the same clock.
 * @param contactDigits the contacts' numbers, in the demo's order (those with index % 11 = 5 opted out).
 */
export function demoHistory(contactDigits: readonly string[], now: number): DemoHistoryMessage[] {
  let seed = 0x2545f491;
  const next = (n: number) => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return (seed >>> 8) % n;
  };
  const reachable = contactDigits.map((digits, i) => ({ digits, i })).filter(({ i }) => i % 11 !== 5);
  const out: DemoHistoryMessage[] = [];
  for (let d = 6; d >= 0; d--) {
    const outbound = 14 + ((d * 5) % 9);
    const inbound = 2 + (d % 3);
    for (let k = 0; k < outbound + inbound; k++) {
      // Within the 24 hours of day d before now: [now − (d + 1) days + 1 minute, now − d days − 1 minute].
      const createdAt = now - d * 86_400 - 60 - next(86_400 - 120);
      const { digits, i } = reachable[next(reachable.length)]!;
      if (k >= outbound) {
        out.push({
          direction: DIRECTION_INBOUND,
          number: '15550100001',
          mobilePhone: digits,
          message: INBOUND_TEXTS[next(INBOUND_TEXTS.length)]!,
          statusId: LOG_STATUS.RECEIVED,
          errorCode: '',
          segments: 1,
          credits: 0,
          createdAt,
          sentAt: null,
          deliveredAt: null,
        });
        continue;
      }
      const [city] = CITIES[i % CITIES.length]!;
      const message = OUTBOUND_TEXTS[next(OUTBOUND_TEXTS.length)]!.replace('{name}', FIRST[i % FIRST.length]!).replace('{city}', city);
      const { segments } = smsSegments(message);
      const roll = next(100);
      const statusId = roll < 80 ? LOG_STATUS.DELIVERED : roll < 92 ? LOG_STATUS.UNDELIVERED : LOG_STATUS.FAILED;
      out.push({
        direction: DIRECTION_OUTBOUND,
        number: k % 4 === 0 ? '55155' : '15550100001',
        mobilePhone: digits,
        message,
        statusId,
        errorCode: statusId === LOG_STATUS.UNDELIVERED ? 'UNDELIV' : statusId === LOG_STATUS.FAILED ? 'RETRIES_EXHAUSTED' : '',
        segments,
        credits: segments,
        createdAt,
        sentAt: statusId === LOG_STATUS.FAILED ? null : createdAt + 1,
        deliveredAt: statusId === LOG_STATUS.DELIVERED ? Math.min(now, createdAt + 3 + next(40)) : null,
      });
    }
  }
  return out.sort((a, b) => a.createdAt - b.createdAt);
}

/**
 * Writes `demoHistory` to the account's message log, oldest first, with its credits as the log's
 * rules have them (API.md §9.11): every outbound debited when sent, a Failed one refunded. The
 * balance is first raised by what the history keeps, so that it ends where it was (2500).
 */
async function insertDemoHistory(tx: Db, accountId: number, contactDigits: readonly string[], now: number): Promise<void> {
  const history = demoHistory(contactDigits, now);
  const kept = history.filter((m) => m.statusId !== LOG_STATUS.FAILED).reduce((sum, m) => sum + m.credits, 0);
  await accounts.changeCredits(tx, accountId, kept, 'add', now, { type: 'adjustment', note: 'Demo history' });
  for (const m of history) {
    const balance = m.credits > 0 ? await credits.takeCredits(tx, accountId, m.credits, now) : 0;
    if (balance === undefined) throw new Error('demo history: the balance cannot pay for its messages');
    const id = await messageLog.insertPastMessage(tx, accountId, { ...m, typeId: 1 }, m.createdAt);
    if (m.credits > 0) await credits.recordLedgerEntry(tx, accountId, now, 'spend', -m.credits, balance, `message:${id}`);
    if (m.statusId === LOG_STATUS.FAILED) await credits.refundCredits(tx, accountId, m.credits, now, `message:${id}`);
  }
}

async function readDemoAccount(store: Store, mappers: RecordMappers, accountId: number, name: string, token: string): Promise<DemoAccount> {
  const db = store.db;
  const numberRows = await numbers.listNumbers(db, accountId, 1_000_000, 0);
  const contactRows = [];
  for (const e164 of await contacts.listContactsE164(db, accountId))
    contactRows.push((await contacts.findContactByE164(db, accountId, e164))!);
  const groupRows = [];
  for (const id of await groups.listGroupIds(db, accountId)) groupRows.push((await groups.findGroup(db, accountId, id))!);
  const fieldRows = [];
  for (const id of await fields.listCustomFieldIds(db, accountId)) fieldRows.push((await fields.findCustomField(db, accountId, id))!);
  const messageRows = await messages.listScheduledMessages(db, accountId, 1_000_000, 0);
  const customFields = fieldRows.map(mappers.customField);
  return {
    account: { id: accountId, name },
    token,
    numbers: numberRows.map(mappers.number),
    contacts: contactRows.map(mappers.contact),
    groups: groupRows.map(mappers.group),
    customFields,
    customFieldEntries: customFields.flatMap((f) => f.Value).sort((a, b) => a.Id - b.Id),
    scheduledMessages: messageRows.map(mappers.scheduledMessage),
  };
}

/** The recipient of the demo's send and the sender of its sandbox STOP (not one of the demo contacts). */
const DEMO_RECIPIENT = '+15551234567';
/** The recipient of the demo's scheduled message (not the one that texts STOP, so it is delivered). */
const DEMO_SCHEDULED_RECIPIENT = '+15551234568';

/**
 * One ready-to-paste curl line per operation of API.md, then a send, a message scheduled a
 * minute ahead and a sandbox STOP (API.md §10.6, §11.5, §11.3), for the demo banner and the README.
 */
export function demoCurlLines(baseUrl: string, demo: DemoAccount): string[] {
  const t = encodeURIComponent(demo.token);
  const contact = demo.contacts[0]!;
  const group = demo.groups[0]!;
  const field = demo.customFields[0]!;
  const entry = demo.customFieldEntries[0]!;
  const active = demo.numbers.find((n) => n.Status_Id === 0)!;
  const json = "-H 'Content-Type: application/json'";
  return [
    `curl -s '${baseUrl}/v1/numbers/index?access_token=${t}'`,
    `curl -s '${baseUrl}/v1/credits/balance?access_token=${t}'`,
    `curl -s '${baseUrl}/v1/sms/single-schedule-messages?access_token=${t}'`,
    `curl -s '${baseUrl}/v1/contacts/find?number=${encodeURIComponent('+' + contact.Number)}&access_token=${t}'`,
    `curl -s -X PUT '${baseUrl}/v1/groups/update?id=${group.Id}&access_token=${t}' ${json} -d '{"fname":"${group.Name}","fnote":"Monthly news and offers"}'`,
    `curl -s -X PUT '${baseUrl}/v1/custom-contact-fields/update?id=${field.Id}&access_token=${t}' ${json} -d '{"fname":"${field.Name}"}'`,
    `curl -s -X POST '${baseUrl}/v1/custom-contact-fields-entry/update?id=${entry.Id}&access_token=${t}' ${json} -d '{"frfield":${entry.CustomFieldId},"frcontact":"${entry.PhoneNumberId}","fvalue":"${entry.Entry}"}'`,
    // A fresh keyword on every paste: a keyword can be reserved only once per number.
    `curl -s -X POST '${baseUrl}/v1/keyword/reserve?access_token=${t}' ${json} -d "{\\"Keyword\\":\\"JOIN$(date +%s%N)\\",\\"Number\\":\\"${active.Number}\\",\\"AutoreplyMessage\\":\\"Thanks for joining!\\"}"`,
    // API.md §10.6, §11.3: a message's whole life with the sandbox carrier (Queued, Sent, Delivered in sms/index).
    `curl -s -X POST '${baseUrl}/v1/sms/send?access_token=${t}' ${json} -d '{"MobilePhone":"${DEMO_RECIPIENT}","Message":"Hello from msgsvc!"}'`,
    // API.md §10.6: a message scheduled a minute ahead (ISO 8601 in UTC; GNU date, else BSD date):
    // Pending, then Approved and Scheduled with its credit reserved, then sent at its time.
    `curl -s -X POST '${baseUrl}/v1/sms/schedule?access_token=${t}' ${json} -d "{\\"MobilePhone\\":\\"${DEMO_SCHEDULED_RECIPIENT}\\",\\"Message\\":\\"Scheduled a minute ago\\",\\"DateTime\\":\\"$(date -u -d '+1 min' +%FT%TZ 2>/dev/null || date -u -v+1M +%FT%TZ)\\"}"`,
    // API.md §11.5, §11.2: the recipient texts STOP: opted out, a free confirmation, and the next send is refused.
    `curl -s -X POST '${baseUrl}/v1/sandbox/inbound?access_token=${t}' ${json} -d '{"From":"${DEMO_RECIPIENT}","To":"${active.Number}","Message":"STOP"}'`,
  ];
}
