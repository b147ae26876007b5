/**
 * sms/export (API.md §10.9.1): the message log as a CSV file. Its headers and header row; every
 * message newest first with exactly the values its record shows in JSON (from the database, and
 * the same as sms/index's); each of sms/index's filters and `from`/`to` on DateCreated (to the
 * second, both ends); another account's messages never; the 422s exactly sms/index's and
 * sms/stats', in the negotiated format (a success stays CSV whatever the Accept); 401 and 403;
 * formula cells defused; quotes, commas, line breaks and any Unicode read back by csv-parse; over
 * a real socket a large export arrives whole, and a client that stops reading (or goes away)
 * stops the reading of the log. On every store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import type { FastifyInstance } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { buildApp } from '../../../src/app.ts';
import { createDemoAccount, type DemoAccount } from '../../../src/domain/demo.ts';
import { recordMappers } from '../../../src/records/index.ts';
import { createTimeFormat } from '../../../src/lib/time.ts';
import { EXPORT_BATCH_ROWS } from '../../../src/domain/message-export.ts';
import { migrateToLatest, openStore, type Store } from '../../../src/store/db.ts';
import { insertPastMessage, type PastMessage } from '../../../src/store/repositories/message-log.ts';
import { buildTestApp, testConfig, testDatabaseUrl, type TestApp } from '../../helpers/app.ts';
import { assert422, assertError, call, fieldError, JSON_TYPE, XML_TYPE, type Wire } from '../../helpers/operations.ts';
import { messageFromDb } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';
import { keyWith } from '../../helpers/keys.ts';

const EXPORT = '/v1/sms/export';
const CSV_TYPE = 'text/csv; charset=UTF-8';
/** API.md §9.11: the Message record's fields, in order. */
const HEADER = [
  'Id',
  'Direction',
  'Number',
  'MobilePhone',
  'Message',
  'Type_Id',
  'Type_Description',
  'Status_Id',
  'Status_Description',
  'Segments',
  'Credits',
  'BatchId',
  'ScheduledMessageId',
  'ErrorCode',
  'DateCreated',
  'DateSent',
  'DateDelivered',
];
const HEADER_LINE = `${HEADER.join(',')}\r\n`;

/** Epoch seconds of an ISO instant. */
const at = (iso: string) => Date.parse(iso) / 1000;

/** A message in a final state, written through the repository; returns its id. */
async function logMessage(ctx: TestApp, accountId: number, createdAt: number, m: Partial<PastMessage> = {}): Promise<number> {
  const inbound = m.direction === 2;
  await insertPastMessage(
    ctx.store.db,
    accountId,
    {
      direction: 1,
      number: '55155',
      mobilePhone: '15551234567',
      message: 'hello',
      typeId: 1,
      statusId: inbound ? 7 : 3,
      segments: 1,
      credits: inbound ? 0 : 1,
      sentAt: inbound ? null : createdAt + 1,
      deliveredAt: inbound ? null : createdAt + 5,
      errorCode: '',
      ...m,
    },
    createdAt,
  );
  const row = await ctx.store.db
    .selectFrom('messages')
    .select('id')
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** `n` Delivered messages of the account, created at `createdAt`, in multi-row INSERTs inside one transaction. */
async function bulkMessages(store: Store, accountId: number, n: number, createdAt: number): Promise<void> {
  await store.db.transaction().execute(async (tx) => {
    for (let i = 0; i < n; i += 500) {
      const rows = Array.from({ length: Math.min(500, n - i) }, (_, k) => ({
        account_id: accountId,
        direction: 1,
        number: '55155',
        mobile_phone: `1555${String(i + k).padStart(7, '0')}`,
        message: `Bulk message ${i + k}, with "quotes" and a comma`,
        type_id: 1,
        status_id: 3,
        segments: 1,
        credits: 1,
        batch_id: null,
        scheduled_message_id: null,
        opt_out_exempt: 0,
        error_code: '',
        created_at: createdAt,
        sent_at: createdAt,
        delivered_at: createdAt + 1,
        due_at: null,
        lease_token: null,
        mms_template_id: null,
        carrier_message_id: null,
        receipt_status: null,
        receipt_error: null,
        receipt_due_at: null,
      }));
      await tx.insertInto('messages').values(rows).execute();
    }
  });
}

/** The rows of a CSV body (csv-parse, RFC 4180), header row included. */
const rowsOf = (body: string): string[][] => parse(body, { relax_column_count: false });

/** A Message record as its CSV row: JSON's values as text, null as an empty cell. */
const rowOf = (record: Record<string, string | number | null>): string[] =>
  HEADER.map((k) => (record[k] === null ? '' : String(record[k])));

/** The ids of an export (the first cell of each row after the header). */
async function exportIds(ctx: TestApp, demo: DemoAccount, query = ''): Promise<number[]> {
  const res = await call(ctx.app, { path: EXPORT, token: demo.token, query });
  assert.equal(res.statusCode, 200, res.body);
  const rows = rowsOf(res.body);
  assert.deepEqual(rows[0], HEADER);
  return rows.slice(1).map((r) => Number(r[0]));
}

/** The ids sms/index lists for the same filters (every page). */
async function indexIds(ctx: TestApp, demo: DemoAccount, query = ''): Promise<number[]> {
  const ids: number[] = [];
  for (let page = 1; ; page++) {
    const res = await call(ctx.app, { path: '/v1/sms/index', token: demo.token, query: `${query}&per-page=100&page=${page}` });
    assert.equal(res.statusCode, 200, res.body);
    ids.push(...(JSON.parse(res.body) as { Id: number }[]).map((m) => m.Id));
    if (Number(res.headers['x-pagination-page-count']) <= page) return ids;
  }
}

storeTest(
  'sms/export: headers, the header row, then every message newest first with exactly its record values (as sms/index shows them)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const id = demo.account.id;

    // An empty log: the header row alone.
    const empty = await call(ctx.app, { path: EXPORT, token: demo.token });
    assert.equal(empty.statusCode, 200, empty.body);
    assert.equal(empty.body, HEADER_LINE);

    const t0 = at('2026-06-01T10:00:00Z');
    await logMessage(ctx, id, t0); // Delivered
    await logMessage(ctx, id, t0 + 60, { statusId: 4, errorCode: 'UNDELIV:001', deliveredAt: null }); // Undelivered
    await logMessage(ctx, id, t0 + 120, { statusId: 5, errorCode: 'ESME_RINVDSTADR', sentAt: null, deliveredAt: null, credits: 2 });
    await logMessage(ctx, id, t0 + 180, { direction: 2, mobilePhone: '447911123456', message: 'STOP' }); // Received
    await logMessage(ctx, id, t0 + 240, { typeId: 2, credits: 3, message: 'An MMS' });
    // Through the API: a Queued message, no DateSent yet.
    const sent = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: demo.token,
      body: { MobilePhone: '+1 202 555 0142', Message: 'Hi' },
    });
    assert.equal(sent.statusCode, 201, sent.body);

    const res = await call(ctx.app, { path: EXPORT, token: demo.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], CSV_TYPE);
    assert.equal(res.headers['content-disposition'], 'attachment; filename="messages.csv"');
    assert.equal(res.headers.vary, 'Accept');
    assert.ok(res.headers['x-rate-limit-limit'] && res.headers['x-rate-limit-remaining'] !== undefined);
    // Not paginated: streamed whole, no pagination headers, no Link, no Content-Length.
    assert.equal(res.headers['x-pagination-total-count'], undefined);
    assert.equal(res.headers.link, undefined);
    assert.equal(res.headers['content-length'], undefined);
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    // RFC 4180: CRLF after every record, the last one too; the header row first, exactly.
    assert.ok(res.body.startsWith(HEADER_LINE));
    assert.ok(res.body.endsWith('\r\n'));
    assert.doesNotMatch(res.body.replace(/\r\n/g, ''), /[\r\n]/, 'no bare CR or LF outside quotes here');

    // Every row: the record from the database, in Id descending order.
    const ids = (await ctx.store.db.selectFrom('messages').select('id').where('account_id', '=', id).orderBy('id', 'desc').execute()).map(
      (r) => r.id,
    );
    assert.equal(ids.length, 6);
    const expected = [HEADER];
    for (const m of ids) expected.push(rowOf(await messageFromDb(ctx, m)));
    assert.deepEqual(rowsOf(res.body), expected);
    // …and exactly what sms/index shows in JSON, value for value.
    const index = await call(ctx.app, { path: '/v1/sms/index', token: demo.token });
    assert.deepEqual(rowsOf(res.body).slice(1), (JSON.parse(index.body) as Record<string, string | number | null>[]).map(rowOf));
    // Spot checks of the rendering: nulls are empty cells, "" stays empty, times as the record writes them.
    const rows = rowsOf(res.body);
    const undelivered = rows.find((r) => r[13] === 'UNDELIV:001')!;
    assert.equal(undelivered[16], '');
    assert.equal(undelivered[14], '2026-06-01 10:01:00');
    assert.equal(rows[1]![15], '', 'the Queued message has no DateSent');
    assert.equal(rows[1]![11], '', 'no BatchId');

    // HEAD: the same status and headers, no body, nothing read.
    const head = await call(ctx.app, { method: 'HEAD', path: EXPORT, token: demo.token });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-type'], CSV_TYPE);
    assert.equal(head.headers['content-disposition'], 'attachment; filename="messages.csv"');
    assert.equal(head.body, '');
    // `/v1/sms/export/` and `fields=`, `page` change nothing.
    const again = await call(ctx.app, { path: `${EXPORT}/`, token: demo.token, query: 'fields=Id&page=2&per-page=1' });
    assert.equal(again.body, res.body);
  },
);

storeTest(
  "sms/export filters: sms/index's four and from/to on DateCreated (to the second, both ends), combined; another account's messages never",
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const other = await ctx.seed('Other account');
    const id = demo.account.id;
    const t0 = at('2026-06-01T00:00:00Z');
    await logMessage(ctx, id, t0 - 1); // 2026-05-31 23:59:59
    await logMessage(ctx, id, t0, { statusId: 4, errorCode: 'UNDELIV' });
    await logMessage(ctx, id, t0 + 3600, { direction: 2, mobilePhone: '447911123456' });
    await logMessage(ctx, id, t0 + 7200, { statusId: 5, mobilePhone: '447911123456', sentAt: null, deliveredAt: null });
    await logMessage(ctx, id, t0 + 86_399); // 2026-06-01 23:59:59
    await logMessage(ctx, id, t0 + 86_400); // 2026-06-02 00:00:00
    // A send-group batch (Queued messages with their BatchId, created now).
    const group = demo.groups[0]!;
    const batch = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send-group',
      token: demo.token,
      body: { GroupId: group.Id, Message: 'To all' },
    });
    assert.equal(batch.statusCode, 201, batch.body);
    const batchId = (JSON.parse(batch.body) as { Id: number; Recipients: number }).Id;
    // Another account's messages, everywhere in the same ranges, and its own batch.
    for (const s of [t0 - 1, t0, t0 + 3600, t0 + 86_400]) {
      await logMessage(ctx, other.account.id, s, { mobilePhone: '447911123456' });
      await logMessage(ctx, other.account.id, s, { direction: 2 });
    }
    const theirGroup = other.groups[0]!;
    const theirBatch = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send-group',
      token: other.token,
      body: { GroupId: theirGroup.Id, Message: 'Theirs' },
    });
    assert.equal(theirBatch.statusCode, 201, theirBatch.body);
    const theirBatchId = (JSON.parse(theirBatch.body) as { Id: number }).Id;
    const theirs = new Set(
      (await ctx.store.db.selectFrom('messages').select('id').where('account_id', '=', other.account.id).execute()).map((r) => r.id),
    );

    const all = await exportIds(ctx, demo);
    assert.ok(all.length > 6);
    assert.deepEqual(
      all,
      [...all].sort((a, b) => b - a),
      'newest first',
    );
    assert.ok(!all.some((m) => theirs.has(m)), "another account's messages never");
    // sms/index's filters give what sms/index gives, in the same order.
    for (const query of [
      'Direction=Outbound',
      'Direction=Inbound',
      'Status_Id=1',
      'Status_Id=4',
      'Status_Id=5',
      'MobilePhone=%2B447911123456',
      `MobilePhone=${encodeURIComponent('+44 7911 123456')}`,
      `BatchId=${batchId}`,
      `BatchId=${batchId}&Status_Id=1`,
      'Direction=Outbound&MobilePhone=%2B447911123456',
      'Direction=&Status_Id=&MobilePhone=&BatchId=&from=&to=',
    ]) {
      const ids = await exportIds(ctx, demo, query);
      assert.deepEqual(ids, await indexIds(ctx, demo, query), query);
    }
    assert.ok((await exportIds(ctx, demo, `BatchId=${batchId}`)).length > 0);
    // Another account's batch, and an integer no batch has: the header row alone.
    assert.deepEqual(await exportIds(ctx, demo, `BatchId=${theirBatchId}`), []);
    assert.deepEqual(await exportIds(ctx, demo, 'BatchId=0'), []);
    assert.deepEqual(await exportIds(ctx, demo, 'BatchId=9999999999999999'), []);

    // from / to on DateCreated, to the second, both ends included.
    const created = new Map<number, number>(
      (await ctx.store.db.selectFrom('messages').select(['id', 'created_at']).where('account_id', '=', id).execute()).map((r) => [
        r.id,
        Number(r.created_at),
      ]),
    );
    const between = (from: number | undefined, to: number | undefined) =>
      all.filter((m) => (from === undefined || created.get(m)! >= from) && (to === undefined || created.get(m)! <= to));
    const q = (name: string, value: string) => `${name}=${encodeURIComponent(value)}`;
    const cases: [string, number | undefined, number | undefined][] = [
      [q('from', '2026-06-01 00:00:00'), t0, undefined],
      [q('to', '2026-06-01 00:00:00'), undefined, t0],
      [`${q('from', '2026-06-01 00:00:00')}&${q('to', '2026-06-01 23:59:59')}`, t0, t0 + 86_399],
      [`${q('from', '2026-06-01 00:00:01')}&${q('to', '2026-06-01 23:59:58')}`, t0 + 1, t0 + 86_398],
      [`${q('from', '2026-06-01 01:00:00')}&${q('to', '2026-06-01 01:00:00')}`, t0 + 3600, t0 + 3600],
      // The other forms sms/stats reads: sms/schedule's DateTime and ISO 8601 with an offset.
      [q('from', '2026:06:01 02:00:00'), t0 + 7200, undefined],
      [q('to', '2026-06-01T03:00:00+01:00'), undefined, t0 + 7200],
    ];
    for (const [query, from, to] of cases) {
      const expected = between(from, to);
      assert.deepEqual(await exportIds(ctx, demo, query), expected, query);
    }
    assert.equal(between(t0, t0 + 86_399).length, 4);
    // Combined with a filter.
    assert.deepEqual(
      await exportIds(ctx, demo, `Direction=Outbound&${q('from', '2026-06-01 00:00:00')}&${q('to', '2026-06-01 23:59:59')}`),
      between(t0, t0 + 86_399).filter((m) => m !== all.find((x) => created.get(x) === t0 + 3600)),
    );
    // The other account sees its own, never ours.
    const theirExport = await call(ctx.app, { path: EXPORT, token: other.token });
    const theirIds = rowsOf(theirExport.body)
      .slice(1)
      .map((r) => Number(r[0]));
    assert.deepEqual(new Set(theirIds), theirs);
  },
);

storeTest(
  "sms/export: a bad filter is sms/index's 422, a bad from/to sms/stats'; errors in the negotiated format, a success CSV whatever the Accept",
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    await logMessage(ctx, demo.account.id, at('2026-06-01T00:00:00Z'));
    const wires: Wire[] = ['json', 'xml', 'xml-param'];
    // Exactly sms/index's answer, body and status line, in each format.
    for (const query of [
      'Direction=outbound',
      'Direction[]=Outbound',
      'Status_Id=8',
      'Status_Id=sent',
      'MobilePhone=abc',
      'BatchId=1.5',
      'BatchId=x&MobilePhone=1&Status_Id=9&Direction=in',
    ]) {
      for (const wire of wires) {
        const mine = await call(ctx.app, { path: EXPORT, token: demo.token, query, wire });
        const index = await call(ctx.app, { path: '/v1/sms/index', token: demo.token, query, wire });
        assert.equal(index.statusCode, 422);
        assert.equal(mine.statusCode, 422, `${query} ${wire}`);
        assert.equal(mine.statusMessage, 'Data Validation Failed.');
        assert.equal(mine.headers['content-type'], wire === 'json' ? JSON_TYPE : XML_TYPE);
        assert.equal(mine.body, index.body, `${query} ${wire}`);
        assert.equal(mine.headers['content-disposition'], undefined);
      }
    }
    // from / to: sms/stats' messages.
    const enc = encodeURIComponent;
    for (const query of [
      'from=yesterday',
      'to=2026-13-01%2000:00:00',
      'from=x&to=y',
      `from=${enc('2026-06-02 00:00:00')}&to=${enc('2026-06-01 00:00:00')}`,
    ]) {
      for (const wire of wires) {
        const mine = await call(ctx.app, { path: EXPORT, token: demo.token, query, wire });
        const stats = await call(ctx.app, { path: '/v1/sms/stats', token: demo.token, query, wire });
        assert.equal(stats.statusCode, 422);
        assert.equal(mine.statusCode, 422, `${query} ${wire}`);
        assert.equal(mine.body, stats.body, `${query} ${wire}`);
      }
    }
    assert422(await call(ctx.app, { path: EXPORT, token: demo.token, query: 'from=x&to=y' }), [
      fieldError('from', 'The format of From is invalid.'),
      fieldError('to', 'The format of To is invalid.'),
    ]);
    // Both kinds at once: sms/index's filters first, then from, to.
    assert422(
      await call(ctx.app, { path: EXPORT, token: demo.token, query: 'to=x&Status_Id=0&from=y' }),
      [
        fieldError('Status_Id', 'Status Id is invalid.'),
        fieldError('from', 'The format of From is invalid.'),
        fieldError('to', 'The format of To is invalid.'),
      ],
      'json',
    );
    // A success is CSV whatever the Accept or _format: XML, text/csv, or nothing that matches.
    const csv = (await call(ctx.app, { path: EXPORT, token: demo.token })).body;
    for (const accept of ['application/xml', 'text/csv', 'text/csv, application/xml;q=0.5', 'image/png', '*/*']) {
      const res = await ctx.app.inject({ url: `${EXPORT}?access_token=${demo.token}`, headers: { accept } });
      assert.equal(res.statusCode, 200, accept);
      assert.equal(res.headers['content-type'], CSV_TYPE, accept);
      assert.equal(res.body, csv);
    }
    for (const format of ['xml', 'json', 'csv']) {
      const res = await ctx.app.inject({ url: `${EXPORT}?_format=${format}&access_token=${demo.token}` });
      assert.equal(res.headers['content-type'], CSV_TYPE, format);
      assert.equal(res.body, csv);
    }
    // An error for an Accept that names neither JSON nor XML: JSON.
    const textCsv = await ctx.app.inject({ url: `${EXPORT}?Status_Id=9&access_token=${demo.token}`, headers: { accept: 'text/csv' } });
    assert422(textCsv, [fieldError('Status_Id', 'Status Id is invalid.')]);
    // 401 without a key, in the negotiated format; the HEAD of a bad query is the 422 without a body.
    assertError(
      await ctx.app.inject({ url: EXPORT, headers: { accept: 'application/xml' } }),
      401,
      'Your request was made with invalid credentials.',
      'xml',
    );
    assertError(await ctx.app.inject({ url: `${EXPORT}?access_token=nope` }), 401, 'Your request was made with invalid credentials.');
    const head = await call(ctx.app, { method: 'HEAD', path: EXPORT, token: demo.token, query: 'Status_Id=9' });
    assert.equal(head.statusCode, 422);
    assert.equal(head.body, '');
    // Scope sms:read: a key with another resource's scopes only gets the 403; sms:read or sms:write may.
    const contacts = await keyWith(ctx, demo.account.id, ['contacts:write', 'numbers:read']);
    assertError(
      await call(ctx.app, { path: EXPORT, token: contacts, wire: 'xml' }),
      403,
      'You are not allowed to perform this action.',
      'xml',
    );
    for (const scopes of [['sms:read'], ['sms:write'], ['*']]) {
      const key = await keyWith(ctx, demo.account.id, scopes);
      const res = await call(ctx.app, { path: EXPORT, token: key });
      assert.equal(res.statusCode, 200, `${scopes.join()}: ${res.body}`);
      assert.equal(res.body, csv);
    }
  },
);

storeTest(
  "sms/export: a cell beginning with =, +, - or @ gets a leading '; quotes, commas, line breaks and Unicode round-trip through csv-parse",
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const texts: [string, string][] = [
      // [the message, its cell in the file]
      ['=HYPERLINK("http://evil.example","click")', `'=HYPERLINK("http://evil.example","click")`],
      ['+1 202 555 0142 call me', `'+1 202 555 0142 call me`],
      ['-2+3', `'-2+3`],
      ['@SUM(1,2)', `'@SUM(1,2)`],
      // csv-stringify's escape_formulas also guards a leading tab or CR and the full-width signs.
      ['\t=1+1', `'\t=1+1`],
      ['＝1+1', `'＝1+1`],
      // Not at the start: written as it is.
      ['Total = 5 + 3 - 1 @ noon', 'Total = 5 + 3 - 1 @ noon'],
      [' =not first', ' =not first'],
      ["'already quoted", "'already quoted"],
      ['A plain message', 'A plain message'],
      ['Quote " and "double" quotes', 'Quote " and "double" quotes'],
      ['comma, separated, words', 'comma, separated, words'],
      ['two\nlines', 'two\nlines'],
      ['windows\r\nlines and a lone\rreturn', 'windows\r\nlines and a lone\rreturn'],
      ['Zoë, café, 中文, עברית, emoji 😀👍🏽, ☃', 'Zoë, café, 中文, עברית, emoji 😀👍🏽, ☃'],
      ['', ''],
    ];
    const ids: number[] = [];
    let s = at('2026-06-01T00:00:00Z');
    for (const [text] of texts) ids.push(await logMessage(ctx, demo.account.id, s++, { message: text }));
    // ErrorCodes are cells too: a carrier's reason may begin with a sign.
    const reasonId = await logMessage(ctx, demo.account.id, s, { statusId: 4, errorCode: '-1 RESULT_ERROR', deliveredAt: null });
    const res = await call(ctx.app, { path: EXPORT, token: demo.token });
    assert.equal(res.statusCode, 200);
    // The bytes are UTF-8.
    assert.equal(Buffer.from(res.rawPayload).toString('utf8'), res.body);
    assert.ok(Buffer.from(res.rawPayload).includes(Buffer.from('😀', 'utf8')));
    const rows = rowsOf(res.body);
    assert.equal(rows.length, 1 + texts.length + 1);
    const byId = new Map(rows.slice(1).map((r) => [Number(r[0]), r]));
    texts.forEach(([, cell], i) => assert.equal(byId.get(ids[i]!)![4], cell, JSON.stringify(texts[i]![0])));
    assert.equal(byId.get(reasonId)![13], "'-1 RESULT_ERROR");
    // RFC 4180 quoting, as written: quotes doubled inside a quoted field, a field with a comma or a line break quoted.
    assert.ok(res.body.includes('"Quote "" and ""double"" quotes"'));
    assert.ok(res.body.includes('"comma, separated, words"'));
    assert.ok(res.body.includes('"two\nlines"'), 'a lone LF is quoted');
    assert.ok(res.body.includes('"windows\r\nlines and a lone\rreturn"'));
    assert.ok(res.body.includes(',A plain message,'), 'a plain field is not quoted');
    // Numbers are never guarded, and every row has the header's 17 cells.
    for (const row of rows) assert.equal(row.length, HEADER.length);
  },
);

/** An app on a fresh database of the running store whose store counts the queries that read `messages`, listening on 127.0.0.1. */
async function countingServer(t: { after: (fn: () => unknown) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-export-'));
  const config = testConfig(await testDatabaseUrl(dir));
  const store = openStore(config.database);
  await migrateToLatest(store);
  // Counts the SELECTs that read `messages` (a Kysely plugin sees every query built through it).
  let reads = 0;
  const counter: KyselyPlugin = {
    transformQuery(args) {
      if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node.from).includes('"name":"messages"')) reads++;
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  };
  const counted: Store = { ...store, db: store.db.withPlugin(counter), close: () => store.close() };
  const app: FastifyInstance = buildApp(config, { store: counted });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  t.after(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { store, port, reads: () => reads, app };
}

/** GET over a socket; resolves with the response as soon as its head arrives (the body unread, paused). */
function open(port: number, path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { accept: 'application/json' } }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

storeTest('sms/export over a real socket: 5,000 messages arrive whole, newest first, read in keyset batches', async (t) => {
  const server = await countingServer(t);
  const demo = await createDemoAccount(server.store, recordMappers(createTimeFormat('UTC')), 'US');
  await bulkMessages(server.store, demo.account.id, 5000, at('2026-06-01T00:00:00Z'));
  const before = server.reads();
  const res = await open(server.port, `${EXPORT}?access_token=${encodeURIComponent(demo.token)}`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], CSV_TYPE);
  assert.equal(res.headers['transfer-encoding'], 'chunked');
  const body = (await readAll(res)).toString('utf8');
  const rows = rowsOf(body);
  assert.equal(rows.length, 5001);
  assert.deepEqual(rows[0], HEADER);
  const ids = rows.slice(1).map((r) => Number(r[0]));
  for (let i = 1; i < ids.length; i++) assert.equal(ids[i], ids[i - 1]! - 1, 'every message once, newest first');
  assert.equal(rows.at(-1)![4], 'Bulk message 0, with "quotes" and a comma');
  assert.equal(rows[1]![4], 'Bulk message 4999, with "quotes" and a comma');
  // Full batches (of EXPORT_BATCH_ROWS), then one that finds none: each row read once.
  assert.equal(server.reads() - before, 5000 / EXPORT_BATCH_ROWS + 1);
});

storeTest('sms/export: the log is read only as fast as the client takes the file, and no more once it has gone', async (t) => {
  const server = await countingServer(t);
  const demo = await createDemoAccount(server.store, recordMappers(createTimeFormat('UTC')), 'US');
  // About 11 MB of CSV (100,000 rows of about 110 bytes), far more than the socket buffers hold.
  await bulkMessages(server.store, demo.account.id, 100_000, at('2026-06-01T00:00:00Z'));
  const before = server.reads();
  const res = await open(server.port, `${EXPORT}?access_token=${encodeURIComponent(demo.token)}`);
  assert.equal(res.statusCode, 200);
  // The client reads nothing: the server stops once the buffers are full (no batch read for a second).
  let paused = server.reads() - before;
  for (let waited = 0; waited < 30_000; waited += 1000) {
    await sleep(1000);
    const now = server.reads() - before;
    if (now === paused) break;
    paused = now;
  }
  await sleep(500);
  assert.equal(server.reads() - before, paused, 'no batch is read while the client reads nothing');
  const batches = 100_000 / EXPORT_BATCH_ROWS;
  assert.ok(paused < batches * 0.6, `${paused} of ${batches} batches read for a client that read nothing`);
  t.diagnostic(`batches read while the client read nothing: ${paused} of ${batches}`);
  // The client goes away: the reading stops for good.
  res.destroy();
  await sleep(1000);
  const gone = server.reads() - before;
  assert.ok(gone <= paused + 1, `${gone} batches read after the client went away (${paused} before)`);
  await sleep(500);
  assert.equal(server.reads() - before, gone);
  // The server still answers (nothing stuck), and a full download reads the whole log.
  const again = await open(server.port, `${EXPORT}?access_token=${encodeURIComponent(demo.token)}&MobilePhone=15550000042`);
  const rows = rowsOf((await readAll(again)).toString('utf8'));
  assert.equal(rows.length, 2);
  assert.equal(rows[1]![3], '15550000042');
});
