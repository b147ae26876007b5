/**
 * The list of where a person's data lives (src/store/personal-data.ts, docs/API.md §10.2.1) is
 * checked against what a migrated database really has, on SQLite and PostgreSQL: every column of
 * every table is classified, either as personal data (with what erasure does to it) or as holding
 * none, and the lists name no column the database lacks. A migration that adds a column fails
 * here until the column is classified: shown by adding one. Every table of personal data has its
 * erasure step. The consent ledger of erased contacts is append-only in the database.
 * Then the pieces of erasure that need no database: the number's redaction in free text, and the
 * scrubbing of kept JSON (webhook payloads, kept responses).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { numberRedactor, numberSha256 } from '../../src/domain/erasure.ts';
import { classifiedColumns, ERASED, erasedValues, PERSONAL_DATA, scrubJson, type PersonalTable } from '../../src/store/personal-data.ts';
import { ERASURE_ORDER } from '../../src/store/repositories/erasure.ts';
import { buildTestApp } from '../helpers/app.ts';
import { schemaColumns } from '../helpers/schema.ts';
import { storeTest } from '../helpers/stores.ts';

/** What is wrong between the lists and the database's columns, one line per column; [] when all agree. */
function problems(actual: Map<string, string[]>): string[] {
  const lists = classifiedColumns();
  const out: string[] = [];
  for (const [table, columns] of actual) {
    const known = lists.get(table);
    for (const column of columns) {
      const personal = known?.personal.has(column) ?? false;
      const none = known?.none.has(column) ?? false;
      if (!personal && !none)
        out.push(`${table}.${column}: not classified (src/store/personal-data.ts: PERSONAL_DATA with its erasure, or NO_PERSONAL_DATA)`);
      if (personal && none) out.push(`${table}.${column}: in both lists`);
    }
  }
  for (const [table, { personal, none }] of lists) {
    const columns = new Set(actual.get(table) ?? []);
    for (const column of [...personal, ...none])
      if (!columns.has(column)) out.push(`${table}.${column}: listed, but the database has no such column`);
  }
  return out;
}

storeTest('personal data: every column of every table of a migrated database is classified, and nothing else is', async (t, kind) => {
  const ctx = await buildTestApp(t);
  const actual = await schemaColumns(ctx.store);
  assert.ok(actual.size >= 40, `${actual.size} tables`);
  assert.ok(actual.has('erased_consent') && actual.has('messages') && actual.has('kysely_migration'), [...actual.keys()].join(', '));
  assert.deepEqual(problems(actual), []);

  // A migration that adds a column holding a phone number (or anything) fails the check until it is classified.
  await sql`alter table messages add column recipient_backup text`.execute(ctx.store.db);
  await sql`create table sms_archive (id integer primary key, mobile_phone text)`.execute(ctx.store.db);
  assert.deepEqual(problems(await schemaColumns(ctx.store)).sort(), [
    'messages.recipient_backup: not classified (src/store/personal-data.ts: PERSONAL_DATA with its erasure, or NO_PERSONAL_DATA)',
    'sms_archive.id: not classified (src/store/personal-data.ts: PERSONAL_DATA with its erasure, or NO_PERSONAL_DATA)',
    'sms_archive.mobile_phone: not classified (src/store/personal-data.ts: PERSONAL_DATA with its erasure, or NO_PERSONAL_DATA)',
  ]);
  t.diagnostic(`${kind}: ${actual.size} tables, ${[...actual.values()].flat().length} columns`);
});

test('personal data: every table of the list has its erasure step, and the values written come from the list', () => {
  assert.deepEqual([...ERASURE_ORDER].sort(), Object.keys(PERSONAL_DATA).sort());
  // The consent ledger is kept before the contact goes; links are found by the number before the messages lose it.
  const at = (table: PersonalTable) => ERASURE_ORDER.indexOf(table);
  assert.ok(at('contact_consent') < at('contacts'));
  assert.ok(at('link_clicks') < at('messages') && at('message_links') < at('messages'));
  assert.ok(at('messages') < at('webhook_deliveries') && at('messages') < at('idempotency_keys'));
  assert.deepEqual(erasedValues('messages'), { mobile_phone: ERASED, message: '' });
  assert.deepEqual(erasedValues('message_links'), { url: '' });
  assert.deepEqual(erasedValues('link_clicks'), { ip: '', user_agent: '' });
});

storeTest('personal data: the consent ledger of erased contacts is append-only in the database', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const db = ctx.store.db;
  await db
    .insertInto('erased_consent')
    .values({
      id: 999_001,
      account_id: demo.account.id,
      number_sha256: numberSha256('15550100199'),
      opted_out: 1,
      source: 'keyword',
      detail: 'STOP',
      carrier: 'sandbox',
      created_at: 1,
      erased_at: 2,
    })
    .execute();
  await assert.rejects(db.updateTable('erased_consent').set({ opted_out: 0 }).where('id', '=', 999_001).execute(), /append-only/);
  await assert.rejects(db.deleteFrom('erased_consent').where('id', '=', 999_001).execute(), /append-only/);
  assert.equal(
    (await db.selectFrom('erased_consent').select('opted_out').where('id', '=', 999_001).executeTakeFirstOrThrow()).opted_out,
    1,
  );
});

test('erasure: the number is found in free text in any common writing, and nothing else is taken', () => {
  const redact = numberRedactor('+13125550178', 'US');
  const cases: [string, string][] = [
    ['13125550178', 'erased'],
    ['+13125550178', 'erased'],
    ['3125550178', 'erased'],
    ['Number "+1 (312) 555-0178" has already been taken.', 'Number "erased" has already been taken.'],
    ['call 312.555.0178 or 312-555-0178 now', 'call erased or erased now'],
    ['send-13125550178-2026', 'send-erased-2026'],
    ['+1 312 555 0178 2026', 'erased 2026'],
    ['3125550178 3125550178', 'erased erased'],
    // Other numbers, ids and times stay.
    ['+1 312 555 0179', '+1 312 555 0179'],
    ['13125550178001', '13125550178001'],
    ['2026-11-23 10:00:00', '2026-11-23 10:00:00'],
    ['id 178, 555 items', 'id 178, 555 items'],
    ['no digits', 'no digits'],
  ];
  for (const [text, expected] of cases) assert.equal(redact(text), expected, text);
  // A national writing with a trunk 0 (a UK number read in the US region needs its code, or the 0).
  const uk = numberRedactor('+447700900123', 'GB');
  assert.equal(uk('07700 900123'), 'erased');
  assert.equal(uk('+44 7700 900 123'), 'erased');
  // The consent ledger's hash: SHA-256 of the E.164 digits without '+' (`printf 13125550178 | sha256sum`).
  assert.equal(numberSha256('13125550178'), '36e7591892b28bc6e077e630dda49a55c0e08195dd9c91872f729d5f29fc15f9');
});

test("erasure: kept JSON loses the person's number, texts and contact data, record by record", () => {
  const person = {
    digits: '13125550178',
    contactIds: new Set([12]),
    messageIds: new Set([90, 91]),
    contactTexts: ['Zebedee', 'Quillfeather'],
    redact: numberRedactor('+13125550178', 'US'),
  };
  // A kept response of sms/send (records), of contacts/create, of custom-contact-fields-entry/update, and a 422.
  const messages = [
    { Id: 90, Number: '55155', MobilePhone: '13125550178', Message: 'Hi Zeb', BatchId: '' },
    { Id: 95, Number: '55155', MobilePhone: '13125550179', Message: 'Hi Ann', BatchId: '' },
  ];
  assert.deepEqual(scrubJson(messages, person), [
    { Id: 90, Number: '55155', MobilePhone: ERASED, Message: '', BatchId: '' },
    { Id: 95, Number: '55155', MobilePhone: '13125550179', Message: 'Hi Ann', BatchId: '' },
  ]);
  const contact = {
    Id: 12,
    Number: '13125550178',
    FirstName: 'Zeb',
    LastName: 'Q',
    BirthDay: '1990-01-02',
    Email: 'z@q.example',
    Zip: 'Z1',
    City: 'Q',
    OptedOut: 0,
  };
  assert.deepEqual(scrubJson(contact, person), {
    Id: 12,
    Number: ERASED,
    FirstName: '',
    LastName: '',
    BirthDay: '0000-00-00',
    Email: '',
    Zip: '',
    City: '',
    OptedOut: 0,
  });
  assert.deepEqual(scrubJson({ Id: 3, CustomFieldId: 4, PhoneNumberId: 12, Entry: 'secret' }, person), {
    Id: 3,
    CustomFieldId: 4,
    PhoneNumberId: 12,
    Entry: '',
  });
  assert.deepEqual(scrubJson({ Id: 4, CustomFieldId: 4, PhoneNumberId: 13, Entry: 'kept' }, person), {
    Id: 4,
    CustomFieldId: 4,
    PhoneNumberId: 13,
    Entry: 'kept',
  });
  assert.deepEqual(scrubJson([{ field: 'Number', message: 'Number "(312) 555-0178" has already been taken.' }], person), [
    { field: 'Number', message: 'Number "erased" has already been taken.' },
  ]);
  // A kept preview names no number: its text goes when it holds the contact's words or number.
  const preview = (Message: string) => ({ Message, Encoding: 'GSM-7', Segments: 1, Credits: 1 });
  assert.deepEqual(scrubJson(preview('Hello Zebedee, see you'), person), preview(''));
  assert.deepEqual(scrubJson(preview('Call 312 555 0178'), person), preview(''));
  assert.deepEqual(scrubJson(preview('Hello Ann, see you'), person), preview('Hello Ann, see you'));
  // Stored event rows: a message's, a contact's, a click's.
  const event = (data: object) => ({ v: 1, type: 'x', at: 1, data });
  assert.deepEqual(
    scrubJson(event({ id: 91, number: '55155', mobile_phone: '13125550178', message: 'STOP' }), person),
    event({ id: 91, number: '55155', mobile_phone: ERASED, message: '' }),
  );
  assert.deepEqual(
    scrubJson(
      event({
        id: 12,
        number: '13125550178',
        first_name: 'Zeb',
        last_name: 'Q',
        birthday: '1990-01-02',
        email: '',
        zip: '',
        city: 'Q',
        group_ids: [1],
      }),
      person,
    ),
    event({ id: 12, number: ERASED, first_name: '', last_name: '', birthday: null, email: '', zip: '', city: '', group_ids: [1] }),
  );
  assert.deepEqual(
    scrubJson(event({ message_id: 90, url: 'https://example.com/zeb', clicks: 2 }), person),
    event({ message_id: 90, url: '', clicks: 2 }),
  );
  const other = event({ message_id: 7, url: 'https://example.com/ann', clicks: 2 });
  assert.equal(scrubJson(other, person), other, 'unchanged: the same value');
});
