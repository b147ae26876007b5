/**
 * `GET` and `PUT|PATCH /v1/account/settings` (API.md §14.3.4) on each store: the defaults, the
 * effective TimeZone, changes of only the fields sent, the pairing of the two hours (the stored
 * value of the other counts), every 422 with its message in JSON and XML, non-string values, the
 * 405 with Allow, HEAD, form bodies, and "a failed write changes nothing"; `SenderSelection`
 * (API.md §17): `first` by default, `pool`, and anything else `Sender Selection is invalid.`, after
 * the other fields' errors.
 */
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertBody, assertError, call, fieldError, type Wire, WIRES } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const PATH = '/v1/account/settings';

async function put(ctx: TestApp, token: string, body: unknown, wire: Wire = 'json', method: 'PUT' | 'PATCH' = 'PUT') {
  return call(ctx.app, { method, path: PATH, token, body, wire });
}

async function settingsRow(ctx: TestApp, accountId: number) {
  return ctx.store.db
    .selectFrom('account_settings')
    .select(['quiet_start', 'quiet_end', 'time_zone'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

storeTest('GET account/settings: the defaults (no hours, the service zone), JSON, XML and HEAD', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_TIMEZONE: 'Europe/Paris' });
  const demo = await ctx.seed();
  for (const wire of WIRES) {
    const res = await call(ctx.app, { path: PATH, token: demo.token, wire });
    assertBody(res, wire, 200, { QuietHoursStart: '', QuietHoursEnd: '', TimeZone: 'Europe/Paris', SenderSelection: 'first' });
  }
  const json = await call(ctx.app, { path: PATH, token: demo.token });
  assert.equal(json.body, '{"QuietHoursStart":"","QuietHoursEnd":"","TimeZone":"Europe/Paris","SenderSelection":"first"}');
  const xml = await call(ctx.app, { path: PATH, token: demo.token, wire: 'xml' });
  assert.equal(
    xml.body,
    '<?xml version="1.0" encoding="UTF-8"?>\n<response><QuietHoursStart></QuietHoursStart><QuietHoursEnd></QuietHoursEnd><TimeZone>Europe/Paris</TimeZone><SenderSelection>first</SenderSelection></response>\n',
  );
  const head = await call(ctx.app, { method: 'HEAD', path: PATH, token: demo.token });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['content-length'], String(Buffer.byteLength(json.body)));
  assert.equal(await settingsRow(ctx, demo.account.id), undefined, 'a read writes nothing');
});

storeTest('account/settings: any other method is 405 with Allow GET, HEAD, PUT, PATCH; no token is 401', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const method of ['POST', 'DELETE'] as const) {
    const res = await call(ctx.app, { method, path: PATH, token: demo.token, body: {} });
    assertError(res, 405, 'Method Not Allowed. This URL can only handle the following request methods: GET, HEAD, PUT, PATCH.');
    assert.equal(res.headers.allow, 'GET, HEAD, PUT, PATCH');
  }
  const options = await ctx.app.inject({ method: 'OPTIONS', url: `${PATH}?access_token=${demo.token}` });
  assert.equal(options.statusCode, 405);
  assert.equal(options.headers.allow, 'GET, HEAD, PUT, PATCH');
  const anonymous = await ctx.app.inject({ method: 'GET', url: PATH, headers: { accept: 'application/json' } });
  assert.equal(anonymous.statusCode, 401);
});

storeTest('PUT and PATCH change only the fields sent; "" clears both hours; TimeZone "" follows the service again', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  let res = await put(ctx, demo.token, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00' });
  assertBody(res, 'json', 200, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00', TimeZone: 'UTC', SenderSelection: 'first' });
  res = await put(ctx, demo.token, { TimeZone: 'America/New_York' }, 'xml', 'PATCH');
  assertBody(res, 'xml', 200, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00', TimeZone: 'America/New_York', SenderSelection: 'first' });
  // One hour alone: the other keeps its stored value.
  res = await put(ctx, demo.token, { QuietHoursEnd: '06:30' });
  assertBody(res, 'json', 200, {
    QuietHoursStart: '22:00',
    QuietHoursEnd: '06:30',
    TimeZone: 'America/New_York',
    SenderSelection: 'first',
  });
  res = await put(ctx, demo.token, { QuietHoursStart: '23:15' }, 'xml-param');
  assertBody(res, 'xml-param', 200, {
    QuietHoursStart: '23:15',
    QuietHoursEnd: '06:30',
    TimeZone: 'America/New_York',
    SenderSelection: 'first',
  });
  assert.deepEqual(await settingsRow(ctx, demo.account.id), { quiet_start: '23:15', quiet_end: '06:30', time_zone: 'America/New_York' });
  // GET shows the same; the other account is untouched.
  assertBody(await call(ctx.app, { path: PATH, token: demo.token }), 'json', 200, {
    QuietHoursStart: '23:15',
    QuietHoursEnd: '06:30',
    TimeZone: 'America/New_York',
    SenderSelection: 'first',
  });
  assertBody(await call(ctx.app, { path: PATH, token: other.token }), 'json', 200, {
    QuietHoursStart: '',
    QuietHoursEnd: '',
    TimeZone: 'UTC',
    SenderSelection: 'first',
  });
  // An empty body and unknown fields change nothing.
  res = await put(ctx, demo.token, { Foo: 'bar' });
  assertBody(res, 'json', 200, {
    QuietHoursStart: '23:15',
    QuietHoursEnd: '06:30',
    TimeZone: 'America/New_York',
    SenderSelection: 'first',
  });
  // Both "" (or null) clear them; TimeZone "" returns to the service default (stored NULL).
  res = await put(ctx, demo.token, { QuietHoursStart: '', QuietHoursEnd: null, TimeZone: '' });
  assertBody(res, 'json', 200, { QuietHoursStart: '', QuietHoursEnd: '', TimeZone: 'UTC', SenderSelection: 'first' });
  assert.deepEqual(await settingsRow(ctx, demo.account.id), { quiet_start: null, quiet_end: null, time_zone: null });
  // A form body (API.md §3.2).
  const form = await call(ctx.app, {
    method: 'PUT',
    path: PATH,
    token: demo.token,
    rawBody: 'QuietHoursStart=21%3A00&QuietHoursEnd=08%3A00&TimeZone=Asia%2FTokyo',
    contentType: 'application/x-www-form-urlencoded',
  });
  assertBody(form, 'json', 200, { QuietHoursStart: '21:00', QuietHoursEnd: '08:00', TimeZone: 'Asia/Tokyo', SenderSelection: 'first' });
  // Valid names: links, UTC, Etc/GMT+5.
  for (const zone of ['UTC', 'Etc/GMT+5', 'Asia/Calcutta', 'US/Eastern', 'Europe/Busingen']) {
    assertBody(await put(ctx, demo.token, { TimeZone: zone }), 'json', 200, {
      QuietHoursStart: '21:00',
      QuietHoursEnd: '08:00',
      TimeZone: zone,
      SenderSelection: 'first',
    });
  }
});

storeTest('PUT account/settings: every 422 with its message, in JSON and XML; nothing saved', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const cases: [unknown, { field: string; message: string }[]][] = [
    // One alone on an account without hours: the missing one cannot be blank.
    [{ QuietHoursStart: '22:00' }, [fieldError('QuietHoursEnd', 'Quiet Hours End cannot be blank.')]],
    [{ QuietHoursEnd: '07:00' }, [fieldError('QuietHoursStart', 'Quiet Hours Start cannot be blank.')]],
    [{ QuietHoursStart: '22:00', QuietHoursEnd: '' }, [fieldError('QuietHoursEnd', 'Quiet Hours End cannot be blank.')]],
    [{ QuietHoursStart: '08:00', QuietHoursEnd: '08:00' }, [fieldError('QuietHoursEnd', 'Quiet Hours End is invalid.')]],
    [
      { QuietHoursStart: '7:00', QuietHoursEnd: '24:00' },
      [
        fieldError('QuietHoursStart', 'The format of Quiet Hours Start is invalid.'),
        fieldError('QuietHoursEnd', 'The format of Quiet Hours End is invalid.'),
      ],
    ],
    [
      { QuietHoursStart: '22:00:00', QuietHoursEnd: ' 07:00' },
      [
        fieldError('QuietHoursStart', 'The format of Quiet Hours Start is invalid.'),
        fieldError('QuietHoursEnd', 'The format of Quiet Hours End is invalid.'),
      ],
    ],
    // A malformed hour counts as given: the other is still required.
    [
      { QuietHoursStart: '25:00' },
      [
        fieldError('QuietHoursStart', 'The format of Quiet Hours Start is invalid.'),
        fieldError('QuietHoursEnd', 'Quiet Hours End cannot be blank.'),
      ],
    ],
    // Non-strings.
    [
      { QuietHoursStart: 2200, QuietHoursEnd: ['07:00'] },
      [
        fieldError('QuietHoursStart', 'Quiet Hours Start must be a string.'),
        fieldError('QuietHoursEnd', 'Quiet Hours End must be a string.'),
      ],
    ],
    [
      { QuietHoursStart: { h: 22 }, QuietHoursEnd: true, TimeZone: 5 },
      [
        fieldError('QuietHoursStart', 'Quiet Hours Start must be a string.'),
        fieldError('QuietHoursEnd', 'Quiet Hours End must be a string.'),
        fieldError('TimeZone', 'Time Zone must be a string.'),
      ],
    ],
    [{ TimeZone: ['UTC'] }, [fieldError('TimeZone', 'Time Zone must be a string.')]],
    // Zones: not IANA names, wrong case, offsets, names ICU refuses.
    ...['Mars/Olympus', 'utc', 'europe/paris', '+05:00', 'GMT+5', 'Factory', 'Etc/GMT+15', ' UTC', 'Europe/Paris\n'].map(
      (zone): [unknown, { field: string; message: string }[]] => [{ TimeZone: zone }, [fieldError('TimeZone', 'Time Zone is invalid.')]],
    ),
    [
      { QuietHoursEnd: '07:00', TimeZone: 'Nowhere' },
      [fieldError('QuietHoursStart', 'Quiet Hours Start cannot be blank.'), fieldError('TimeZone', 'Time Zone is invalid.')],
    ],
  ];
  for (const [body, errors] of cases) {
    for (const wire of ['json', 'xml'] as const) {
      assert422(await put(ctx, demo.token, body, wire), errors, wire);
    }
  }
  assert.equal(await settingsRow(ctx, demo.account.id), undefined, 'nothing saved');
  // Broken JSON is a 400, not a 500.
  const broken = await call(ctx.app, { method: 'PUT', path: PATH, token: demo.token, rawBody: '{"QuietHoursStart":' });
  assert.equal(broken.statusCode, 400);
});

storeTest('PUT account/settings: the stored value of the other hour counts (change one, clear one, equal to the stored one)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  assert.equal((await put(ctx, demo.token, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00', TimeZone: 'Asia/Tokyo' })).statusCode, 200);
  // Clearing one alone leaves the other alone: that one (the cleared) cannot be blank.
  for (const wire of ['json', 'xml'] as const) {
    assert422(
      await put(ctx, demo.token, { QuietHoursStart: '' }, wire),
      [fieldError('QuietHoursStart', 'Quiet Hours Start cannot be blank.')],
      wire,
    );
    assert422(
      await put(ctx, demo.token, { QuietHoursEnd: null }, wire),
      [fieldError('QuietHoursEnd', 'Quiet Hours End cannot be blank.')],
      wire,
    );
    // Equal to the stored other one.
    assert422(
      await put(ctx, demo.token, { QuietHoursStart: '07:00' }, wire),
      [fieldError('QuietHoursEnd', 'Quiet Hours End is invalid.')],
      wire,
    );
    assert422(
      await put(ctx, demo.token, { QuietHoursEnd: '22:00' }, wire),
      [fieldError('QuietHoursEnd', 'Quiet Hours End is invalid.')],
      wire,
    );
  }
  // A failed PUT changed nothing, the zone included.
  assert422(await put(ctx, demo.token, { QuietHoursEnd: '22:00', TimeZone: 'Europe/Paris' }), [
    fieldError('QuietHoursEnd', 'Quiet Hours End is invalid.'),
  ]);
  assert.deepEqual(await settingsRow(ctx, demo.account.id), { quiet_start: '22:00', quiet_end: '07:00', time_zone: 'Asia/Tokyo' });
  // A start later than the end (spanning midnight) and an earlier one are both fine.
  assertBody(await put(ctx, demo.token, { QuietHoursStart: '01:00' }), 'json', 200, {
    QuietHoursStart: '01:00',
    QuietHoursEnd: '07:00',
    TimeZone: 'Asia/Tokyo',
    SenderSelection: 'first',
  });
});

storeTest('SenderSelection (API.md §17): first by default, pool and back, kept with the other fields; JSON, XML and a form', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const record = (selection: string, hours: [string, string] = ['', ''], zone = 'UTC') => ({
    QuietHoursStart: hours[0],
    QuietHoursEnd: hours[1],
    TimeZone: zone,
    SenderSelection: selection,
  });
  assertBody(await call(ctx.app, { path: PATH, token: demo.token }), 'json', 200, record('first'));
  assertBody(await put(ctx, demo.token, { SenderSelection: 'pool' }), 'json', 200, record('pool'));
  const stored = async () =>
    (
      await ctx.store.db
        .selectFrom('account_settings')
        .select('sender_selection')
        .where('account_id', '=', demo.account.id)
        .executeTakeFirst()
    )?.sender_selection;
  assert.equal(await stored(), 'pool');
  for (const wire of WIRES) assertBody(await call(ctx.app, { path: PATH, token: demo.token, wire }), wire, 200, record('pool'));
  assertBody(await call(ctx.app, { path: PATH, token: other.token }), 'json', 200, record('first'));
  // The other fields change without it; it changes without them.
  assertBody(
    await put(ctx, demo.token, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00' }, 'xml'),
    'xml',
    200,
    record('pool', ['22:00', '07:00']),
  );
  assertBody(
    await put(ctx, demo.token, { SenderSelection: 'first', TimeZone: 'Asia/Tokyo' }, 'xml-param', 'PATCH'),
    'xml-param',
    200,
    record('first', ['22:00', '07:00'], 'Asia/Tokyo'),
  );
  assert.equal(await stored(), 'first');
  const form = await call(ctx.app, {
    method: 'PATCH',
    path: PATH,
    token: demo.token,
    rawBody: 'SenderSelection=pool',
    contentType: 'application/x-www-form-urlencoded',
  });
  assertBody(form, 'json', 200, record('pool', ['22:00', '07:00'], 'Asia/Tokyo'));
  assert.equal(await stored(), 'pool');
});

storeTest('SenderSelection: anything but first or pool is 422 Sender Selection is invalid., listed last; nothing changes', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const invalid = fieldError('SenderSelection', 'Sender Selection is invalid.');
  for (const value of ['POOL', 'Pool', ' pool', 'pool ', 'random', 'sticky', '', null, 1, 0, true, ['pool'], { pool: 1 }]) {
    for (const wire of ['json', 'xml'] as const) assert422(await put(ctx, demo.token, { SenderSelection: value }, wire), [invalid], wire);
  }
  assert.equal(await settingsRow(ctx, demo.account.id), undefined, 'nothing saved');
  // Its error comes after those of the other fields, whatever the body's order.
  assert422(await put(ctx, demo.token, { SenderSelection: 'x', TimeZone: 'Nowhere', QuietHoursStart: '7:00' }), [
    fieldError('QuietHoursStart', 'The format of Quiet Hours Start is invalid.'),
    fieldError('QuietHoursEnd', 'Quiet Hours End cannot be blank.'),
    fieldError('TimeZone', 'Time Zone is invalid.'),
    invalid,
  ]);
  // A valid SenderSelection beside an invalid field is not saved either.
  assert422(
    await put(ctx, demo.token, { SenderSelection: 'pool', TimeZone: 'Nowhere' }, 'xml'),
    [fieldError('TimeZone', 'Time Zone is invalid.')],
    'xml',
  );
  assert.equal(await settingsRow(ctx, demo.account.id), undefined);
  assertBody(await call(ctx.app, { path: PATH, token: demo.token }), 'json', 200, {
    QuietHoursStart: '',
    QuietHoursEnd: '',
    TimeZone: 'UTC',
    SenderSelection: 'first',
  });
});
