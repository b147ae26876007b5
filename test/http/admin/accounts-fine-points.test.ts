/**
 * The fine points of docs/API.md §4.4 and §3.5 on the account records of §16, the parent's
 * `/v1/subaccounts/…` and the operator's `/admin/v1/…` alike, on each store: values are read as
 * sent, never trimmed (`" 1"` is no integer, a no-break space is no blank, lengths count before
 * trimming), JSON integers past 2^53 keep their text, counts in messages have thousands commas,
 * an update of the stored values keeps DateUpdated, update's errors come in §16's field order, and
 * `/admin/v1/<controller>` runs its `index`.
 */
import assert from 'node:assert/strict';
import { createManualClock } from '../../../src/lib/time.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { assert422, call, fieldError } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { admin, adminOk, operatorKey, type AccountRec } from './helpers.ts';

storeTest(
  '§16 fields as sent: " 1" is no integer, a no-break space is no blank, lengths before trimming, 64-bit JSON integers',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const op = await operatorKey(ctx);
    const create = (body: unknown) => call(ctx.app, { method: 'POST', path: '/v1/subaccounts/create', token: demo.token, body });

    assert422(await create({ Name: 'Y', Credits: ' 1' }), [fieldError('Credits', 'Credits must be an integer.')]);
    assert422(await create({ Name: 'Y', MaxPerSecond: ' 1', MaxPerDay: '1 ' }), [
      fieldError('MaxPerSecond', 'Max Per Second must be an integer.'),
      fieldError('MaxPerDay', 'Max Per Day must be an integer.'),
    ]);
    // One final "\n" passes (PCRE's `$`), two do not.
    assert422(await create({ Name: 'Y', Credits: '1\n\n' }), [fieldError('Credits', 'Credits must be an integer.')]);
    // Blank is PHP's trim set only; a no-break space, \f and U+3000 are names.
    assert422(await create({ Name: ' \t\n' }), [fieldError('Name', 'Name cannot be blank.')]);
    for (const name of ['\u00a0', '\f', '\u3000', '  padded  ']) {
      const res = await create({ Name: name });
      assert.equal(res.statusCode, 201, `${JSON.stringify(name)}: ${res.body}`);
      assert.equal(res.json<AccountRec>().Name, name, 'stored as sent');
    }
    // 250 spaces and six letters are 256 characters.
    assert422(await create({ Name: `${' '.repeat(250)}abcdef` }), [fieldError('Name', 'Name should contain at most 255 characters.')]);
    // A JSON integer past 2^53 within 64 bits is an integer, out of range; past 64 bits it is none.
    const createRaw = (rawBody: string) => call(ctx.app, { method: 'POST', path: '/v1/subaccounts/create', token: demo.token, rawBody });
    assert422(await createRaw('{"Name":"Y","MaxPerDay":9007199254740993}'), [
      fieldError('MaxPerDay', 'Max Per Day must be no greater than 2,147,483,647.'),
    ]);
    assert422(await createRaw('{"Name":"Y","MaxPerDay":18446744073709551616}'), [
      fieldError('MaxPerDay', 'Max Per Day must be an integer.'),
    ]);

    const child = (await create({ Name: 'Child' })).json<AccountRec>();
    const credits = (body: unknown) =>
      call(ctx.app, { method: 'POST', path: '/v1/subaccounts/credits', token: demo.token, query: `id=${child.Id}`, body });
    assert422(await credits({ Amount: ' 1' }), [fieldError('Amount', 'Amount must be an integer.')]);
    assert422(await credits({ Amount: '+1 ' }), [fieldError('Amount', 'Amount must be an integer.')]);
    assert.equal((await credits({ Amount: '+1\n' })).statusCode, 200, 'a sign and one final newline pass');
    assert422(
      await call(ctx.app, {
        method: 'PUT',
        path: '/v1/subaccounts/update',
        token: demo.token,
        query: `id=${child.Id}`,
        body: { MaxPerDay: ' 7' },
      }),
      [fieldError('MaxPerDay', 'Max Per Day must be an integer.')],
    );
    // The operator's credits and numbers read the same way; a refused create of a number is a 422, never a 500.
    assert422(
      await admin(ctx, { method: 'POST', path: '/accounts/credits', token: op.secret, query: `id=${child.Id}`, body: { Amount: ' 2' } }),
      [fieldError('Amount', 'Amount must be an integer.')],
    );
    for (const body of [
      { Number: '15550200003', AccountId: ` ${child.Id}` },
      { Number: '15550200003', AccountId: `${child.Id} ` },
    ]) {
      assert422(await admin(ctx, { method: 'POST', path: '/numbers/create', token: op.secret, body }), [
        fieldError('AccountId', 'Account Id must be an integer.'),
      ]);
    }
    assert422(
      await admin(ctx, {
        method: 'POST',
        path: '/numbers/create',
        token: op.secret,
        body: { Number: '15550200003', AccountId: child.Id, Status_Id: ' 1' },
      }),
      [fieldError('Status_Id', 'Status Id must be an integer.')],
    );
    const added = await admin(ctx, {
      method: 'POST',
      path: '/numbers/create',
      token: op.secret,
      body: { Number: '15550200003', AccountId: `+${child.Id}\n` },
    });
    assert.equal(added.statusCode, 201, added.body);
    assert422(
      await admin(ctx, {
        method: 'PUT',
        path: '/numbers/update',
        token: op.secret,
        query: 'number=15550200003',
        body: { AccountId: ` ${demo.account.id}` },
      }),
      [fieldError('AccountId', 'Account Id must be an integer.')],
    );
  },
);

storeTest('§16 "Not enough credits" messages write thousands with commas', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const op = await operatorKey(ctx);
  const available = (await call(ctx.app, { path: '/v1/credits/balance', token: demo.token })).json<{ AvailableCredits: number }>()
    .AvailableCredits;
  assert.ok(available >= 1000, 'the demo account holds thousands, so the comma shows');
  const n = (x: number) => x.toLocaleString('en-US');
  assert422(
    await call(ctx.app, { method: 'POST', path: '/v1/subaccounts/create', token: demo.token, body: { Name: 'X', Credits: 99_999_999 } }),
    [fieldError('Credits', `Not enough credits: 99,999,999 needed, ${n(available)} available.`)],
  );
  const child = await adminOk<AccountRec>(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: 'Poor' } });
  assert422(
    await admin(ctx, { method: 'POST', path: '/accounts/credits', token: op.secret, query: `id=${child.Id}`, body: { Amount: -1500 } }),
    [fieldError('Amount', 'Not enough credits: 1,500 needed, 0 available.')],
  );
});

storeTest('§16 updates: the stored values again keep DateUpdated; errors in the order Name, Status, MaxPerSecond, MaxPerDay', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 4, 1, 9, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  const op = await operatorKey(ctx, 'ops', clock);
  const child = (
    await call(ctx.app, { method: 'POST', path: '/v1/subaccounts/create', token: demo.token, body: { Name: 'Sub A', MaxPerDay: 60 } })
  ).json<AccountRec>();
  const update = (body: unknown) =>
    call(ctx.app, { method: 'PUT', path: '/v1/subaccounts/update', token: demo.token, query: `id=${child.Id}`, body });
  for (const body of [
    { Name: 'Sub A' },
    { MaxPerDay: 60 },
    { MaxPerDay: '60' },
    { Status: 'active' },
    { Name: 'Sub A', MaxPerSecond: 0 },
  ]) {
    clock.advance(2000);
    const res = await update(body);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<AccountRec>().DateUpdated, child.DateUpdated, `unchanged by ${JSON.stringify(body)}`);
  }
  clock.advance(2000);
  const changed = (await update({ Name: 'Sub A', MaxPerDay: 61 })).json<AccountRec>();
  assert.notEqual(changed.DateUpdated, child.DateUpdated, 'a changed value moves it');
  assert.equal(changed.MaxPerDay, 61);
  clock.advance(2000);
  const again = await adminOk<AccountRec>(ctx, 200, {
    method: 'PUT',
    path: '/accounts/update',
    token: op.secret,
    query: `id=${child.Id}`,
    body: { Status: 'active' },
  });
  assert.equal(again.DateUpdated, changed.DateUpdated, "the operator's update too");

  const all = { MaxPerDay: -1, MaxPerSecond: 'z', Status: 'bogus', Name: '' };
  const expected = [
    fieldError('Name', 'Name cannot be blank.'),
    fieldError('Status', 'Status is invalid.'),
    fieldError('MaxPerSecond', 'Max Per Second must be an integer.'),
    fieldError('MaxPerDay', 'Max Per Day must be no less than 0.'),
  ];
  assert422(await update(all), expected);
  assert422(await admin(ctx, { method: 'PUT', path: '/accounts/update', token: op.secret, query: `id=${child.Id}`, body: all }), expected);
  // A padded status is not a status.
  assert422(await update({ Status: ' active' }), [fieldError('Status', 'Status is invalid.')]);
});

storeTest('/admin/v1/<controller> runs its index action; one with no index action is 404', async (t) => {
  const ctx = await buildTestApp(t);
  await ctx.seed();
  const op = await operatorKey(ctx);
  for (const controller of ['accounts', 'numbers', 'carriers', 'audit']) {
    const short = await admin(ctx, { path: `/${controller}`, token: op.secret });
    const index = await admin(ctx, { path: `/${controller}/index`, token: op.secret });
    assert.equal(short.statusCode, 200, `${controller}: ${short.body}`);
    assert.equal(short.body, index.body, controller);
    assert.equal(short.headers['x-pagination-total-count'], index.headers['x-pagination-total-count']);
    // A trailing slash too; a write method gets index's 405.
    assert.equal((await admin(ctx, { path: `/${controller}/`, token: op.secret })).statusCode, 200);
    const wrong = await admin(ctx, { method: 'DELETE', path: `/${controller}`, token: op.secret });
    assert.equal(wrong.statusCode, 405);
    assert.equal(wrong.headers.allow, 'GET, HEAD');
  }
  // usage is an operation of its own path, as before.
  assert.equal((await admin(ctx, { path: '/usage', token: op.secret })).statusCode, 200);
  assert.equal((await admin(ctx, { path: '/nothing', token: op.secret })).statusCode, 404);
});
