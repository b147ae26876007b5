/**
 * The JSON pages SQLite builds itself (issue 15: contacts/index and sms/single-schedule-messages
 * through json_group_array, src/store/repositories listContactsJson / listScheduledMessagesJson)
 * give byte for byte the response the records give through the route's serializer.
 *
 * Two apps on one database: one with MSGSVC_TIMEZONE=UTC (SQLite's JSON), one with
 * Africa/Abidjan, which is UTC all year but not named so (the records, as before). Every response
 * of both is compared: bodies and every header but X-Request-Id. The rows carry what JSON escaping
 * can trip on: quotes, backslashes, every control character, U+2028/2029, non-BMP characters,
 * empty strings, a null birthday, MMS and SMS, contacts with and without groups and fields.
 */
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { buildTestApp, withToken, type TestApp } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';
import { listContactsJson } from '../../src/store/repositories/contacts.ts';
import { listScheduledMessagesJson } from '../../src/store/repositories/messages.ts';

// [sqlite] cases only ({ stores: ['sqlite'] }): SQLite builds these pages; PostgreSQL takes the records path.

const TRICKY = [
  'quote " backslash \\ slash /',
  Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join(''),
  'line\u2028para\u2029end',
  'emoji 😀 and 𝄞, é, 中文, \u007f',
  '',
  '<xml>&amp;</xml>',
];

function compareHeaders(a: Record<string, unknown>, b: Record<string, unknown>, url: string): void {
  const strip = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => k.toLowerCase() !== 'x-request-id'));
  assert.deepEqual(strip(a), strip(b), `headers of ${url}`);
}

async function bothSay(utc: TestApp, records: TestApp, url: string): Promise<string> {
  const [a, b] = await Promise.all([utc.app.inject({ method: 'GET', url }), records.app.inject({ method: 'GET', url })]);
  assert.equal(a.statusCode, 200, `${url}: ${a.body}`);
  assert.equal(a.statusCode, b.statusCode);
  assert.equal(a.body, b.body, `body of ${url}`);
  compareHeaders(a.headers, b.headers, url);
  return a.body;
}

storeTest('SQLite-built JSON pages equal the records path byte for byte', { stores: ['sqlite'] }, async (t) => {
  const utc = await buildTestApp(t, { MSGSVC_TIMEZONE: 'UTC' });
  const demo = await utc.seed('JSON pages');
  const records = await buildTestApp(t, { MSGSVC_TIMEZONE: 'Africa/Abidjan' }, { dir: utc.dir });

  // Tricky text in contacts and scheduled messages, written straight into the file.
  const db = new SQLite(utc.dbPath);
  try {
    const contactIds = db.prepare('select id from contacts where account_id = ? order by id').pluck().all(demo.account.id) as number[];
    const setContact = db.prepare(
      'update contacts set first_name = ?, last_name = ?, city = ?, email = ?, zip = ?, birthday = ? where id = ?',
    );
    contactIds.forEach((id, i) =>
      setContact.run(
        TRICKY[i % TRICKY.length],
        TRICKY[(i + 1) % TRICKY.length],
        TRICKY[(i + 2) % TRICKY.length],
        i % 3 === 0 ? '' : `c${i}@example.com`,
        String(i),
        i % 4 === 0 ? null : '1990-02-03',
        id,
      ),
    );
    // Some contacts in no group and with no field entries.
    db.prepare('delete from group_members where contact_id in (select id from contacts where account_id = ? and id % 5 = 0)').run(
      demo.account.id,
    );
    db.prepare('delete from custom_field_entries where contact_id in (select id from contacts where account_id = ? and id % 7 = 0)').run(
      demo.account.id,
    );
    const messageIds = db
      .prepare('select id from scheduled_messages where account_id = ? order by id')
      .pluck()
      .all(demo.account.id) as number[];
    assert.ok(messageIds.length >= 3, 'the demo has scheduled messages');
    const setMessage = db.prepare('update scheduled_messages set message = ?, subject = ?, mobile_phone = ? where id = ?');
    messageIds.forEach((id, i) =>
      setMessage.run(TRICKY[i % TRICKY.length], TRICKY[(i + 3) % TRICKY.length], `+1555000${String(i).padStart(4, '0')}`, id),
    );
    // One MMS without a template id (the record shows '') beside those with one.
    db.prepare('update scheduled_messages set type_id = 2, mms_template_id = null where id = ?').run(messageIds[0]);
  } finally {
    db.close();
  }

  // The JSON path is really taken on the UTC app (else this test would compare the records path with itself).
  assert.equal(typeof (await listContactsJson(utc.store.db, demo.account.id, {}, 100, 0)), 'string');
  assert.equal(typeof (await listScheduledMessagesJson(utc.store.db, demo.account.id, 100, 0)), 'string');
  assert.equal(utc.config.timeZone, 'UTC');

  const token = demo.token;
  const groupId = (JSON.parse(await bothSay(utc, records, withToken('/v1/groups/index', token))) as { Id: number }[])[0]!.Id;
  const urls = [
    withToken('/v1/contacts/index', token),
    withToken('/v1/contacts/index', token, 'per-page=7&page=3'),
    withToken('/v1/contacts/index', token, 'per-page=1&page=50'),
    withToken('/v1/contacts/index', token, 'page=999'),
    withToken('/v1/contacts/index', token, 'OptedOut=1'),
    withToken('/v1/contacts/index', token, 'OptedOut=0&per-page=10&page=2'),
    withToken('/v1/contacts/index', token, `GroupId=${groupId}`),
    withToken('/v1/contacts/index', token, `GroupId=${groupId}&OptedOut=0`),
    withToken('/v1/contacts/index', token, 'GroupId=999999'),
    withToken('/v1/sms/single-schedule-messages', token),
    withToken('/v1/sms/single-schedule-messages', token, 'per-page=2&page=2'),
    withToken('/v1/sms/single-schedule-messages', token, 'page=0'),
  ];
  let nonEmpty = 0;
  for (const url of urls) {
    const body = await bothSay(utc, records, url);
    if (body !== '[]') nonEmpty++;
    // Valid JSON with the tricky characters intact.
    JSON.parse(body);
  }
  assert.ok(nonEmpty >= 9, 'most pages have records');
  const page = JSON.parse(await bothSay(utc, records, withToken('/v1/contacts/index', token))) as { FirstName: string }[];
  assert.ok(
    page.some((c) => c.FirstName === TRICKY[1]),
    'control characters come back as stored',
  );
  const raw = (await utc.app.inject({ method: 'GET', url: withToken('/v1/sms/single-schedule-messages', token) })).body;
  assert.ok(raw.includes('\\u2028') && !raw.includes('\u2028'), 'U+2028 is escaped (API.md §2.2)');
});

storeTest(
  'contacts and messages written after a page was served show in the next one (no stale JSON)',
  { stores: ['sqlite'] },
  async (t) => {
    const utc = await buildTestApp(t, { MSGSVC_TIMEZONE: 'UTC' });
    const demo = await utc.seed('JSON pages fresh');
    const url = withToken('/v1/contacts/index', demo.token, 'per-page=100');
    const before = JSON.parse((await utc.app.inject({ method: 'GET', url })).body) as unknown[];
    const created = await utc.app.inject({
      method: 'POST',
      url: withToken('/v1/contacts/create', demo.token),
      payload: { Number: '+12025550187', FirstName: 'Fresh' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const after = JSON.parse((await utc.app.inject({ method: 'GET', url })).body) as { FirstName: string }[];
    assert.equal(after.length, before.length + 1);
    assert.equal(after.at(-1)!.FirstName, 'Fresh');
  },
);
