/**
 * The per-scenario floor of `npm run bench` (issue 15 §1): a bare Fastify server (default options:
 * no auth, rate limit, content negotiation, hooks or log line) answering each bench scenario on
 * msgsvc's own path, doing only the scenario's irreducible work on the same generated database:
 *
 * - the SQL msgsvc runs for it (copied from a trace of msgsvc's statements), each statement
 *   prepared once on better-sqlite3, with msgsvc's pragmas (src/store/db.ts: WAL,
 *   synchronous=NORMAL, foreign keys on, 8 MiB cache);
 * - page rows read in raw mode and built as object literals (the fastest row building known, the
 *   same as msgsvc's allRows), then serialised with JSON.stringify, with the column names as keys
 *   and no formatting of times or descriptions;
 * - writes: the same statements in one transaction (BEGIN, or BEGIN IMMEDIATE for sms/send, as
 *   msgsvc does), same durability.
 *
 * Left out on purpose, as msgsvc's own steps rather than the scenario's work: the token lookup and
 * its cache check (`PRAGMA data_version`), input validation beyond what picks the rows, and for
 * the deep pages the second read of list_totals (the floor reads the count and the list version
 * in one statement). Deep pages start at the same page anchor (id at the nearest multiple of 1,000
 * rows, src/store/anchors.ts), found once per list version as msgsvc caches it.
 *
 *   node --import tsx bench/floors/server.ts PORT DB_FILE ACCOUNT_ID
 *
 * Prints `listening <port>` when ready; GET / answers 200 (readiness).
 */
import Database from 'better-sqlite3';
import Fastify, { type FastifyReply } from 'fastify';

const [portArg, file, accountArg] = process.argv.slice(2);
const ACCOUNT = Number(accountArg ?? 1);
const PER_PAGE = 100;
const ANCHOR_STEP = 1000;

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -8192');

type Row = Record<string, unknown>;
/** A statement whose rows are read raw and built by one object literal per row. */
function rowsOf(sql: string): (...params: unknown[]) => Row[] {
  const statement = db.prepare(sql);
  const names = statement.columns().map((c) => c.name);
  statement.raw(true);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- one compiled object literal per row shape; the names are JSON-quoted
  const toRow = new Function('v', `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`) as (v: unknown[]) => Row;
  return (...params) => {
    const raw = statement.all(...params) as unknown[][];
    const out = new Array<Row>(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = toRow(raw[i]!);
    return out;
  };
}
const one = (sql: string) => {
  const statement = db.prepare(sql);
  return (...params: unknown[]) => statement.get(...params) as Row | undefined;
};
const column = (sql: string) => {
  const statement = db.prepare(sql).pluck();
  return (...params: unknown[]) => statement.all(...params) as number[];
};
const run = (sql: string) => {
  const statement = db.prepare(sql);
  return (...params: unknown[]) => statement.run(...params);
};
const json = (reply: FastifyReply, status: number, body: unknown) =>
  reply.code(status).type('application/json; charset=UTF-8').send(JSON.stringify(body));
const now = () => Math.floor(Date.now() / 1000);
const pageOf = (q: { page?: string }) => Math.max(1, Number(q.page ?? 1) || 1);

const CONTACT_COLUMNS = `"id", "number", "opted_out", "first_name", "last_name", "birthday", "email", "zip", "city", "created_at", "updated_at"`;
const sql = {
  credits: one(`select "available_credits" from "credit_balances" where "account_id" = ?`),
  numbersCount: one(`select count(*) as "n" from "account_numbers" where "account_id" = ?`),
  numbersPage: rowsOf(
    `select "number", "status_id", "blocked_at" from "account_numbers" where "account_id" = ? order by "id" limit cast(? as integer) offset cast(? as integer)`,
  ),
  contactByE164: one(`select ${CONTACT_COLUMNS} from "contacts" where "account_id" = ? and "number_e164" = ?`),
  contactById: one(`select ${CONTACT_COLUMNS} from "contacts" where "account_id" = ? and "id" = ?`),
  groupIds: column(`select "group_id" from "group_members" where "contact_id" = ? and "account_id" = ? order by "group_id"`),
  fieldIds: column(
    `select "custom_field_id" from "custom_field_entries" where "contact_id" = ? and "account_id" = ? order by "custom_field_id"`,
  ),
  smsTotals: one(`select "scheduled_messages", "scheduled_messages_version" from "list_totals" where "account_id" = ?`),
  smsColumns: `select "id", "mobile_phone", "message", "scheduled_at", "status_id", "type_id", "mms_template_id", "subject" from "scheduled_messages"`,
  contactTotals: one(`select "contacts", "contacts_version" from "list_totals" where "account_id" = ?`),
  contactsRows: rowsOf(
    `select ${CONTACT_COLUMNS} from "contacts" where "account_id" = ? and "id" in (select value from json_each(?)) order by "id"`,
  ),
  contactsGroups: rowsOf(
    `select "contact_id", "group_id" from "group_members" where "contact_id" in (select value from json_each(?)) and "account_id" = ? order by "contact_id", "group_id"`,
  ),
  contactsFields: rowsOf(
    `select "contact_id", "custom_field_id" from "custom_field_entries" where "contact_id" in (select value from json_each(?)) and +"account_id" = ? order by "contact_id", "custom_field_id"`,
  ),
  groupExists: one(`select "id" from "groups" where "account_id" = ? and "id" = ?`),
  groupRename: run(`update "groups" set "updated_at" = ?, "name" = ?, "note" = ? where "account_id" = ? and "id" = ?`),
  group: one(
    `select "id", "name", "note", "keyword_id", "parent_id", "created_at", "updated_at" from "groups" where "account_id" = ? and "id" = ?`,
  ),
  members: column(`select "contact_id" from "group_members" where "group_id" = ? and "account_id" = ? order by "contact_id"`),
  entry: one(
    `select "id", "custom_field_id", "contact_id", "entry", "created_at", "updated_at" from "custom_field_entries" where "account_id" = ? and "id" = ?`,
  ),
  fieldExists: one(`select "id" from "custom_fields" where "account_id" = ? and "id" = ?`),
  contactExists: one(`select "id" from "contacts" where "account_id" = ? and "id" = ?`),
  entrySet: run(
    `update "custom_field_entries" set "custom_field_id" = ?, "contact_id" = ?, "entry" = ?, "updated_at" = ? where "account_id" = ? and "id" = ?`,
  ),
  accountNumber: one(`select "id", "number", "status_id" from "account_numbers" where "account_id" = ? and "number" = ?`),
  keywordInsert: one(
    `insert into "keyword_reservations" ("account_id", "account_number_id", "number", "keyword", "keyword_key", "autoreply_message", "created_at") values (?, ?, (select n.number from account_numbers n where n.account_id = ? and n.id = ?), ?, ?, ?, ?) returning "id"`,
  ),
  contactInsert: one(
    `insert into "contacts" ("account_id", "number", "number_e164", "opted_out", "first_name", "last_name", "birthday", "email", "zip", "city", "created_at", "updated_at") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning "id"`,
  ),
  firstActiveNumber: one(
    `select "id", "number" from "account_numbers" where "account_id" = ? and "status_id" = ? order by "id" limit cast(? as integer)`,
  ),
  debit: run(
    `update "credit_balances" set "available_credits" = "available_credits" - ?, "updated_at" = ? where "account_id" = ? and "available_credits" >= ?`,
  ),
  messageInsert: one(
    `insert into "messages" ("account_id", "direction", "number", "mobile_phone", "message", "type_id", "status_id", "segments", "credits", "batch_id", "scheduled_message_id", "opt_out_exempt", "created_at", "sent_at", "delivered_at", "due_at", "lease_token", "carrier_message_id", "receipt_status", "receipt_error", "receipt_due_at") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning "id", "direction", "number", "mobile_phone", "message", "type_id", "status_id", "segments", "credits", "batch_id", "scheduled_message_id", "error_code", "created_at", "sent_at", "delivered_at"`,
  ),
};
const smsPage = rowsOf(`${sql.smsColumns} where "account_id" = ? order by "id" limit cast(? as integer) offset cast(? as integer)`);
const smsPageFrom = rowsOf(
  `${sql.smsColumns} where "account_id" = ? and "id" >= ? order by "id" limit cast(? as integer) offset cast(? as integer)`,
);
const contactIdsPage = column(
  `select "id" from "contacts" where "account_id" = ? order by "id" limit cast(? as integer) offset cast(? as integer)`,
);
const contactIdsPageFrom = column(
  `select "id" from "contacts" where "account_id" = ? and "id" >= ? order by "id" limit cast(? as integer) offset cast(? as integer)`,
);

/** The id at row position k × ANCHOR_STEP of a list, cached per list version (msgsvc caches its anchors so). */
function anchorOf(table: 'scheduled_messages' | 'contacts') {
  const at = db.prepare(`select "id" from "${table}" where "account_id" = ? order by "id" limit 1 offset ?`).pluck();
  const cache = new Map<string, number | undefined>();
  return (version: number, offset: number): { fromId: number; offset: number } | undefined => {
    if (offset < ANCHOR_STEP) return undefined;
    const k = Math.floor(offset / ANCHOR_STEP);
    const key = `${version}:${k}`;
    if (!cache.has(key)) cache.set(key, at.get(ACCOUNT, k * ANCHOR_STEP) as number | undefined);
    const fromId = cache.get(key);
    return fromId === undefined ? undefined : { fromId, offset: offset - k * ANCHOR_STEP };
  };
}
const smsAnchor = anchorOf('scheduled_messages');
const contactAnchor = anchorOf('contacts');

/** One contact with its group and custom field ids (contacts/find, contacts/create). */
function contactWithIds(contact: Row): Row {
  return { ...contact, group_ids: sql.groupIds(contact.id, ACCOUNT), custom_field_ids: sql.fieldIds(contact.id, ACCOUNT) };
}
const groupWithMembers = (id: number): Row => ({ ...sql.group(ACCOUNT, id), contact_ids: sql.members(id, ACCOUNT) });

const app = Fastify();
app.get('/', () => Promise.resolve('ok'));

// Reads.
app.get('/v1/credits/balance', (request, reply) => {
  const balance = sql.credits(ACCOUNT)!.available_credits as number;
  if ((request.headers.accept ?? '').includes('xml')) {
    return reply
      .type('application/xml; charset=UTF-8')
      .send(`<?xml version="1.0" encoding="UTF-8"?>\n<response><AvailableCredits>${balance}</AvailableCredits></response>\n`);
  }
  return json(reply, 200, { AvailableCredits: balance });
});
app.get<{ Querystring: { page?: string } }>('/v1/numbers/index', (request, reply) => {
  const total = sql.numbersCount(ACCOUNT)!.n as number;
  reply.header('X-Pagination-Total-Count', String(total));
  return json(reply, 200, sql.numbersPage(ACCOUNT, PER_PAGE, (pageOf(request.query) - 1) * PER_PAGE));
});
app.get<{ Querystring: { number?: string } }>('/v1/contacts/find', (request, reply) => {
  const contact = sql.contactByE164(ACCOUNT, request.query.number ?? '');
  return contact ? json(reply, 200, contactWithIds(contact)) : json(reply, 404, { message: 'not found' });
});
app.get<{ Querystring: { page?: string } }>('/v1/sms/single-schedule-messages', (request, reply) => {
  const totals = sql.smsTotals(ACCOUNT)!;
  const offset = (pageOf(request.query) - 1) * PER_PAGE;
  const start = smsAnchor(totals.scheduled_messages_version as number, offset);
  const rows = start ? smsPageFrom(ACCOUNT, start.fromId, PER_PAGE, start.offset) : smsPage(ACCOUNT, PER_PAGE, offset);
  reply.header('X-Pagination-Total-Count', String(totals.scheduled_messages));
  return json(reply, 200, rows);
});
app.get<{ Querystring: { page?: string } }>('/v1/contacts/index', (request, reply) => {
  const totals = sql.contactTotals(ACCOUNT)!;
  const offset = (pageOf(request.query) - 1) * PER_PAGE;
  const start = contactAnchor(totals.contacts_version as number, offset);
  const ids = JSON.stringify(
    start ? contactIdsPageFrom(ACCOUNT, start.fromId, PER_PAGE, start.offset) : contactIdsPage(ACCOUNT, PER_PAGE, offset),
  );
  const rows = sql.contactsRows(ACCOUNT, ids);
  // Both lists are in contact order: one merge pass gives each contact its ids.
  const groups = sql.contactsGroups(ids, ACCOUNT);
  const fields = sql.contactsFields(ids, ACCOUNT);
  let g = 0;
  let f = 0;
  for (const row of rows) {
    const groupIds: unknown[] = [];
    const fieldIds: unknown[] = [];
    while (g < groups.length && groups[g]!.contact_id === row.id) groupIds.push(groups[g++]!.group_id);
    while (f < fields.length && fields[f]!.contact_id === row.id) fieldIds.push(fields[f++]!.custom_field_id);
    row.group_ids = groupIds;
    row.custom_field_ids = fieldIds;
  }
  reply.header('X-Pagination-Total-Count', String(totals.contacts));
  return json(reply, 200, rows);
});

// sms/stats?interval=hour: the default range (the hour 7 × 24 hours ago to this hour), the same
// grouped statement as msgsvc, the hours filled in one pass (the bench runs in UTC: every hour
// bucket is one unit of 3,600 s, no zone to walk).
const statsUnits = rowsOf(
  `select ("created_at" - cast(? as bigint)) / cast(? as bigint) as "unit", sum(case when "direction" = 1 then 1 else 0 end) as "outbound", sum(case when "direction" = 2 then 1 else 0 end) as "inbound", sum(case when "status_id" = 3 then 1 else 0 end) as "delivered", sum(case when "status_id" = 4 then 1 else 0 end) as "undelivered", sum(case when "status_id" = 5 then 1 else 0 end) as "failed", sum(case when "status_id" = 6 then 1 else 0 end) as "rejected", sum(case when "status_id" in (5, 6) then 0 else "credits" end) as "credits" from "messages" where "account_id" = ? and "created_at" >= ? and "created_at" < ? group by "unit"`,
);
app.get('/v1/sms/stats', (_request, reply) => {
  const t = now();
  const first = Math.floor((t - 7 * 86_400) / 3600) * 3600;
  const count = Math.floor(t / 3600) - first / 3600 + 1;
  const buckets: Row[] = Array.from({ length: count }, (_, i) => ({
    time: first + i * 3600,
    outbound: 0,
    inbound: 0,
    delivered: 0,
    undelivered: 0,
    failed: 0,
    rejected: 0,
    credits: 0,
  }));
  for (const { unit, ...counts } of statsUnits(first, 3600, ACCOUNT, first, first + count * 3600)) {
    Object.assign(buckets[unit as number]!, counts);
  }
  return json(reply, 200, buckets);
});

// Writes: the same statements as msgsvc, in one transaction each.
const groupsUpdate = db.transaction((id: number, name: string, note: string) => {
  if (!sql.groupExists(ACCOUNT, id)) return undefined;
  sql.groupRename(now(), name, note, ACCOUNT, id);
  return groupWithMembers(id);
});
app.put<{ Querystring: { id?: string }; Body: { fname: string; fnote: string } }>('/v1/groups/update', (request, reply) => {
  const group = groupsUpdate(Number(request.query.id), request.body.fname, request.body.fnote);
  return group ? json(reply, 200, group) : json(reply, 404, { message: 'not found' });
});

const entryUpdate = db.transaction((id: number, fieldId: number, contactId: number, value: string) => {
  if (!sql.entry(ACCOUNT, id) || !sql.fieldExists(ACCOUNT, fieldId) || !sql.contactExists(ACCOUNT, contactId)) return undefined;
  sql.entrySet(fieldId, contactId, value, now(), ACCOUNT, id);
  return sql.entry(ACCOUNT, id);
});
app.post<{ Querystring: { id?: string }; Body: { frfield: number; frcontact: string; fvalue: string } }>(
  '/v1/custom-contact-fields-entry/update',
  (request, reply) => {
    const { frfield, frcontact, fvalue } = request.body;
    const entry = entryUpdate(Number(request.query.id), Number(frfield), Number(frcontact), fvalue);
    return entry ? json(reply, 200, entry) : json(reply, 404, { message: 'not found' });
  },
);

const keywordReserve = db.transaction((keyword: string, number: string, autoreply: string) => {
  const n = sql.accountNumber(ACCOUNT, number);
  if (!n) return undefined;
  const { id } = sql.keywordInsert(ACCOUNT, n.id, ACCOUNT, n.id, keyword, keyword.toLowerCase(), autoreply, now())!;
  return [{ id, keyword, number: n.number, autoreply_message: autoreply }];
});
app.post<{ Body: { Keyword: string; Number: string; AutoreplyMessage: string } }>('/v1/keyword/reserve', (request, reply) => {
  const created = keywordReserve(request.body.Keyword, request.body.Number, request.body.AutoreplyMessage);
  return created ? json(reply, 201, created) : json(reply, 422, { message: 'unknown number' });
});

const contactsCreate = db.transaction((e164: string, firstName: string, city: string) => {
  if (sql.contactByE164(ACCOUNT, e164)) return undefined;
  const t = now();
  const { id } = sql.contactInsert(ACCOUNT, e164.slice(1), e164, 0, firstName, '', null, '', '', city, t, t)!;
  return contactWithIds(sql.contactById(ACCOUNT, id)!);
});
app.post<{ Body: { Number: string; FirstName?: string; City?: string } }>('/v1/contacts/create', (request, reply) => {
  const contact = contactsCreate(request.body.Number, request.body.FirstName ?? '', request.body.City ?? '');
  return contact ? json(reply, 201, contact) : json(reply, 422, { message: 'number taken' });
});

// groups/add-contacts: statements with one placeholder per id, prepared once per id count.
const addStatements = new Map<number, { count: (...p: unknown[]) => Row | undefined; insert: (...p: unknown[]) => unknown }>();
function addStatementsFor(n: number) {
  let s = addStatements.get(n);
  if (!s) {
    s = {
      count: one(`select count(*) as "n" from "contacts" where "account_id" = ? and "id" in (${Array(n).fill('?').join(', ')})`),
      insert: run(
        `insert into "group_members" ("account_id", "group_id", "contact_id") values ${Array(n).fill('(?, ?, ?)').join(', ')} on conflict ("group_id", "contact_id") do nothing`,
      ),
    };
    addStatements.set(n, s);
  }
  return s;
}
const groupsAdd = db.transaction((id: number, contactIds: number[]) => {
  if (!sql.groupExists(ACCOUNT, id)) return undefined;
  const s = addStatementsFor(contactIds.length);
  if ((s.count(ACCOUNT, ...contactIds)!.n as number) !== contactIds.length) return undefined;
  const values = new Array<number>(contactIds.length * 3);
  for (let i = 0; i < contactIds.length; i++) {
    values[3 * i] = ACCOUNT;
    values[3 * i + 1] = id;
    values[3 * i + 2] = contactIds[i]!;
  }
  s.insert(...values);
  return groupWithMembers(id);
});
app.post<{ Querystring: { id?: string }; Body: { PhoneNumberIds: number[] } }>('/v1/groups/add-contacts', (request, reply) => {
  const group = groupsAdd(Number(request.query.id), request.body.PhoneNumberIds);
  return group ? json(reply, 200, group) : json(reply, 422, { message: 'unknown group or contact' });
});

// sms/send: the recipient and the sender number read before the transaction (as msgsvc does),
// then the debit and the insert in one BEGIN IMMEDIATE transaction.
const sendTx = db.transaction((from: string, to: string, message: string, segments: number) => {
  const t = Date.now();
  if (sql.debit(segments, Math.floor(t / 1000), ACCOUNT, segments).changes !== 1) return undefined;
  return sql.messageInsert(
    ACCOUNT,
    1,
    from,
    to,
    message,
    1,
    1,
    segments,
    segments,
    null,
    null,
    0,
    Math.floor(t / 1000),
    null,
    null,
    t,
    null,
    null,
    null,
    null,
    null,
  );
});
app.post<{ Body: { MobilePhone: string; Message: string } }>('/v1/sms/send', (request, reply) => {
  const { MobilePhone, Message } = request.body;
  const contact = sql.contactByE164(ACCOUNT, MobilePhone);
  if (contact?.opted_out) return json(reply, 422, { message: 'opted out' });
  const from = sql.firstActiveNumber(ACCOUNT, 0, 1);
  if (!from) return json(reply, 422, { message: 'no active number' });
  const segments = Message.length <= 160 ? 1 : Math.ceil(Message.length / 153);
  const sent = sendTx.immediate(from.number as string, MobilePhone.slice(1), Message, segments);
  return sent ? json(reply, 201, [sent]) : json(reply, 422, { message: 'not enough credits' });
});

await app.listen({ port: Number(portArg ?? 0), host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : portArg}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void app.close().then(() => (db.close(), process.exit(0))));
