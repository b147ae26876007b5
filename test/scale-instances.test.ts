import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startServerProcess, type ServerProcess } from './helpers/net.ts';
import { SCALE_OUT, seededPostgres, uniqueRatePrefix } from './helpers/scale.ts';
import { describeStores, REDIS_TEST_URL } from './helpers/stores.ts';
import type { DemoAccount } from '../src/domain/demo.ts';

const RATE_LIMIT = 25;

describeStores('two instances over one PostgreSQL and one Redis', SCALE_OUT, () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let demo: DemoAccount;
  let databaseUrl: string;

  before(async () => {
    ({ databaseUrl, demo } = await seededPostgres());
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: REDIS_TEST_URL,
      MSGSVC_RATE_KEY_PREFIX: uniqueRatePrefix(),
      MSGSVC_RATE_LIMIT: String(RATE_LIMIT),
      MSGSVC_RATE_WINDOW: '60',
      LOG_LEVEL: 'warn',
    };
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const url = (server: ServerProcess, path: string, extra = '') =>
    `${server.url}${path}?access_token=${demo.token}${extra ? `&${extra}` : ''}`;
  const json = (method: string, body: unknown) => ({
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

  // Order matters inside this describe: the rate-limit test spends the whole allowance last.
  test('a write through one instance is read through the other', async () => {
    const entry = demo.customFieldEntries[0]!;
    const field = demo.customFields.find((f) => f.Id === entry.CustomFieldId)!;
    const write = await fetch(
      url(a, '/v1/custom-contact-fields-entry/update', `id=${entry.Id}`),
      json('PUT', { frfield: entry.CustomFieldId, frcontact: entry.PhoneNumberId, fvalue: 'Written through A' }),
    );
    assert.equal(write.status, 200);
    const read = await fetch(url(b, '/v1/custom-contact-fields/update', `id=${field.Id}`), json('PUT', { fname: field.Name }));
    assert.equal(read.status, 200);
    const record = (await read.json()) as { Value: { Id: number; Entry: string }[] };
    assert.equal(record.Value.find((v) => v.Id === entry.Id)?.Entry, 'Written through A');

    const reserved = await fetch(url(a, '/v1/keyword/reserve'), json('POST', { Keyword: 'SHARED', Number: demo.numbers[0]!.Number }));
    assert.equal(reserved.status, 201);
    const again = await fetch(url(b, '/v1/keyword/reserve'), json('POST', { Keyword: 'shared', Number: demo.numbers[0]!.Number }));
    assert.equal(again.status, 422);
  });

  test('concurrent reservations of one keyword over both instances: exactly one 201, one row', async () => {
    const number = demo.numbers.find((n) => n.Status_Id === 0)!.Number;
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        fetch(url(i % 2 ? a : b, '/v1/keyword/reserve'), json('POST', { Keyword: i % 3 ? 'RACE' : 'race', Number: number })),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 422, 422, 422, 422, 422, 422, 422]);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const rows = await client.query("select count(*)::int as n from keyword_reservations where keyword_key = 'race'");
      assert.equal(rows.rows[0].n, 1);
    } finally {
      await client.end();
    }
  });

  test('concurrent updates of one group: every response is a complete record, the final state is one of the writes', async () => {
    const group = demo.groups[0]!;
    const names = Array.from({ length: 8 }, (_, i) => `Concurrent name ${i}`);
    const responses = await Promise.all(
      names.map((name, i) =>
        fetch(url(i % 2 ? a : b, '/v1/groups/update', `id=${group.Id}`), json('PATCH', { fname: name, fnote: `note ${i}` })),
      ),
    );
    for (const [i, res] of responses.entries()) {
      assert.equal(res.status, 200);
      const record = (await res.json()) as Record<string, unknown>;
      assert.deepEqual(Object.keys(record), [
        'Id',
        'Name',
        'Note',
        'KeywordId',
        'ParentId',
        'DateCreated',
        'DateUpdated',
        'PhoneNumberIds',
      ]);
      assert.equal(record.Name, names[i]);
      assert.equal(record.Note, `note ${i}`);
      assert.deepEqual(record.PhoneNumberIds, group.PhoneNumberIds);
    }
    const final = await fetch(url(a, '/v1/groups/update', `id=${group.Id}`), json('PATCH', { fname: 'Final check' }));
    const finalRecord = (await final.json()) as { Note: string };
    assert.ok(
      names.some((_, i) => finalRecord.Note === `note ${i}`),
      `final note ${finalRecord.Note} is one of the writes`,
    );
  });

  test(`with a limit of ${RATE_LIMIT} per window, exactly that many requests succeed across both instances`, async () => {
    // Spend what the earlier tests left, counted from the headers, then check the sum is exact.
    const probe = await fetch(url(a, '/v1/credits/balance'));
    const remaining = Number(probe.headers.get('x-rate-limit-remaining'));
    assert.ok(remaining > 0 && remaining < RATE_LIMIT);
    const responses = await Promise.all(Array.from({ length: remaining + 20 }, (_, i) => fetch(url(i % 2 ? a : b, '/v1/credits/balance'))));
    const ok = responses.filter((r) => r.status === 200).length;
    const limited = responses.filter((r) => r.status === 429).length;
    assert.equal(ok, remaining);
    assert.equal(limited, 20);
    const usedBefore = RATE_LIMIT - remaining; // includes the probe
    assert.equal(usedBefore + ok, RATE_LIMIT);
  });
});
