/**
 * `msgsvc operators create|list|revoke` (docs/API.md §16.4), and the account, token, credit and
 * number commands as thin callers of the rules the operator's `/admin/v1` uses: each command's
 * result is what the API shows, the same ledger entry, the same refusals. Each case runs the real
 * `msgsvc` binary on the store of the case (SQLite file, or the PostgreSQL database of the app).
 */
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { assertLedgerAddsUp } from '../helpers/ledger.ts';
import { call } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';
import { until } from '../helpers/wait.ts';
import { operatorKey } from '../http/admin/helpers.ts';

/** Runs the CLI on the app's database with the demo off. */
function cli(ctx: TestApp, args: string[]): Promise<CliResult> {
  const db = ctx.config.database;
  return runCli(args, { DATABASE_URL: db.kind === 'sqlite' ? db.path : db.url, MSGSVC_DEMO: '0' });
}

function ok(res: CliResult, what: string): CliResult {
  assert.equal(res.code, 0, `${what} failed (code ${res.code}).\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
  return res;
}

function failed(res: CliResult, what: string): CliResult {
  assert.ok(res.code !== 0 && res.code !== null, `${what} should fail.\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
  assert.equal(res.stdout, '');
  assert.ok(!/\n\s+at /.test(res.stderr), `no stack trace expected: ${res.stderr}`);
  return res;
}

const ADMIN = '/admin/v1';

storeTest('operators create prints a working key once; list shows no secret; revoke ends it', async (t) => {
  const ctx = await buildTestApp(t);
  const res = ok(await cli(ctx, ['operators', 'create', '--name', ' Night shift ']), 'operators create');
  const lines = res.stdout.split('\n');
  assert.equal(lines.length, 2, `stdout should be exactly the secret and a newline: ${JSON.stringify(res.stdout)}`);
  const secret = lines[0]!;
  assert.match(secret, /^[A-Za-z0-9_-]{32}$/);
  assert.match(res.stderr, /^operator key id 1 \(Night shift\); store it now, it is not shown again\n$/);

  // It works on /admin/v1 (and not on /v1); only its hash is stored.
  const list = await call(ctx.app, { path: `${ADMIN}/accounts/index`, token: secret });
  assert.equal(list.statusCode, 200, list.body);
  assert.equal((await call(ctx.app, { path: '/v1/numbers/index', token: secret })).statusCode, 401);
  const rows = await ctx.store.db.selectFrom('operator_keys').selectAll().execute();
  assert.equal(rows.length, 1);
  assert.ok(!JSON.stringify(rows).includes(secret));
  // The use is written beside the request, not before its answer: wait for it (bounded).
  await until(
    'the last use written',
    async () =>
      (await ctx.store.db.selectFrom('operator_keys').select('last_used_at').executeTakeFirstOrThrow()).last_used_at !== null || undefined,
  );

  const listed = JSON.parse(ok(await cli(ctx, ['operators', 'list']), 'operators list').stdout) as Record<string, unknown>[];
  assert.equal(listed.length, 1);
  assert.deepEqual(Object.keys(listed[0]!), ['Id', 'Name', 'Prefix', 'DateCreated', 'DateLastUsed', 'DateRevoked']);
  assert.deepEqual(
    { ...listed[0], DateCreated: 'x', DateLastUsed: 'y' },
    {
      Id: 1,
      Name: 'Night shift',
      Prefix: secret.slice(0, 8),
      DateCreated: 'x',
      DateLastUsed: 'y',
      DateRevoked: null,
    },
  );
  assert.match(String(listed[0]!.DateLastUsed), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, 'used once above');

  assert.match(ok(await cli(ctx, ['operators', 'revoke', '--id', '1']), 'operators revoke').stdout, /revoked/);
  assert.equal((await call(ctx.app, { path: `${ADMIN}/accounts/index`, token: secret })).statusCode, 401);
  const [again, blank, missing] = await Promise.all([
    cli(ctx, ['operators', 'revoke', '--id', '1']),
    cli(ctx, ['operators', 'create', '--name', '  ']),
    cli(ctx, ['operators', 'create']),
  ]);
  assert.match(failed(again, 'revoking twice').stderr, /no live operator key with id 1/);
  assert.match(failed(blank, 'a blank name').stderr, /Name cannot be blank/);
  assert.match(failed(missing, 'no --name').stderr, /--name/);
  const revoked = JSON.parse(ok(await cli(ctx, ['operators', 'list']), 'operators list').stdout) as { DateRevoked: string | null }[];
  assert.match(String(revoked[0]!.DateRevoked), /^\d{4}-/);
});

storeTest('the CLI and /admin/v1 agree: accounts create, credits add, tokens create, numbers add', async (t) => {
  const ctx = await buildTestApp(t);
  const op = await operatorKey(ctx);
  const view = async (id: number) => {
    const res = await call(ctx.app, { path: `${ADMIN}/accounts/view`, token: op.secret, query: `id=${id}` });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Record<string, unknown>>();
  };

  // accounts create: the account the API shows, made by the same rule (quotas included).
  const made = JSON.parse(
    ok(await cli(ctx, ['accounts', 'create', '--name', 'Acme Ltd', '--max-per-day', '500']), 'accounts create').stdout,
  ) as {
    id: number;
    name: string;
  };
  assert.deepEqual(made, { id: 1, name: 'Acme Ltd' });
  const acme = await view(made.id);
  assert.deepEqual(
    { ...acme, DateCreated: '', DateUpdated: '' },
    {
      Id: 1,
      Name: 'Acme Ltd',
      Status: 'active',
      AvailableCredits: 0,
      MaxPerSecond: 0,
      MaxPerDay: 500,
      DateCreated: '',
      DateUpdated: '',
      ParentId: null,
    },
  );
  // The API's twin.
  const twin = await call(ctx.app, {
    method: 'POST',
    path: `${ADMIN}/accounts/create`,
    token: op.secret,
    body: { Name: 'Acme Ltd', MaxPerDay: 500 },
  });
  assert.deepEqual(
    { ...twin.json<Record<string, unknown>>(), Id: 1, DateCreated: '', DateUpdated: '' },
    { ...acme, DateCreated: '', DateUpdated: '' },
  );
  const twinId = twin.json<{ Id: number }>().Id;
  // The same refusal: a name over 255 characters.
  assert.match(
    failed(await cli(ctx, ['accounts', 'create', '--name', 'x'.repeat(256)]), 'a long name').stderr,
    /Name should contain at most 255 characters\./,
  );

  // credits add: the same ledger entry as accounts/credits (type, amount, balance, reference, note).
  ok(await cli(ctx, ['credits', 'add', '--account', '1', '--amount', '40', '--note', 'invoice 7']), 'credits add');
  const api = await call(ctx.app, {
    method: 'POST',
    path: `${ADMIN}/accounts/credits`,
    token: op.secret,
    query: `id=${twinId}`,
    body: { Amount: 40, Note: 'invoice 7' },
  });
  assert.equal(api.statusCode, 200, api.body);
  ok(await cli(ctx, ['credits', 'add', '--account', '1', '--amount', '-15', '--note', 'fix']), 'credits add -15');
  await call(ctx.app, {
    method: 'POST',
    path: `${ADMIN}/accounts/credits`,
    token: op.secret,
    query: `id=${twinId}`,
    body: { Amount: -15, Note: 'fix' },
  });
  const entries = async (id: number) =>
    (
      await ctx.store.db
        .selectFrom('credit_ledger')
        .select(['type', 'amount', 'balance', 'reference', 'note'])
        .where('account_id', '=', id)
        .orderBy('id')
        .execute()
    ).map((e) => ({ ...e, amount: Number(e.amount), balance: Number(e.balance) }));
  assert.deepEqual(await entries(1), [
    { type: 'topup', amount: 40, balance: 40, reference: '', note: 'invoice 7' },
    { type: 'adjustment', amount: -15, balance: 25, reference: '', note: 'fix' },
  ]);
  assert.deepEqual(await entries(twinId), await entries(1));
  assert.equal((await view(1)).AvailableCredits, 25);
  // credits set: one adjustment of the difference; the default note names the command.
  assert.deepEqual(JSON.parse(ok(await cli(ctx, ['credits', 'set', '--account', '1', '--amount', '100']), 'credits set').stdout), {
    AvailableCredits: 100,
  });
  assert.deepEqual((await entries(1)).at(-1), { type: 'adjustment', amount: 75, balance: 100, reference: '', note: 'msgsvc credits set' });
  // The same refusal as the API's Amount rule.
  assert.match(
    failed(await cli(ctx, ['credits', 'add', '--account', '1', '--amount', '2000000000000']), 'an amount past the limit').stderr,
    /Amount must be no greater than 1,000,000,000,000\./,
  );
  await assertLedgerAddsUp(ctx.store);

  // tokens create: a key of the account (createAccountKey), with its label.
  const token = ok(await cli(ctx, ['tokens', 'create', '--account', '1', '--name', 'ci', '--label', 'build box']), 'tokens create');
  const secret = token.stdout.trim();
  const keys = await call(ctx.app, { path: '/v1/keys/index', token: secret });
  assert.equal(keys.statusCode, 200, keys.body);
  assert.deepEqual(
    keys.json<{ Name: string; Scopes: string[] }[]>().map((k) => [k.Name, k.Scopes]),
    [['ci', ['*']]],
  );
  const row = await ctx.store.db.selectFrom('api_tokens').select(['label', 'prefix']).where('account_id', '=', 1).executeTakeFirstOrThrow();
  assert.deepEqual(row, { label: 'build box', prefix: secret.slice(0, 8) });

  // numbers add: the record numbers/create would make; the same duplicate refusal.
  assert.deepEqual(
    JSON.parse(
      ok(await cli(ctx, ['numbers', 'add', '--account', '1', '--number', '+1 555 010 0042', '--status', '301']), 'numbers add').stdout,
    ),
    { Number: '15550100042', Status_Id: 301, Status_Description: 'Temporarily blocked.' },
  );
  const held = await call(ctx.app, { path: `${ADMIN}/numbers/index`, token: op.secret, query: 'AccountId=1' });
  assert.deepEqual(
    held.json<Record<string, unknown>[]>().map((n) => ({ ...n, Blocked_Date: typeof n.Blocked_Date, DateCreated: '' })),
    [
      {
        Number: '15550100042',
        AccountId: 1,
        Status_Id: 301,
        Status_Description: 'Temporarily blocked.',
        Blocked_Date: 'string',
        DateCreated: '',
      },
    ],
  );
  const dupApi = await call(ctx.app, {
    method: 'POST',
    path: `${ADMIN}/numbers/create`,
    token: op.secret,
    body: { Number: '15550100042', AccountId: 1 },
  });
  assert.equal(dupApi.statusCode, 422);
  assert.match(
    failed(await cli(ctx, ['numbers', 'add', '--account', '1', '--number', '15550100042']), 'a duplicate').stderr,
    /already has the number 15550100042/,
  );

  // A closed account (closed through the API) is refused by the commands as by the API.
  assert.equal(
    (await call(ctx.app, { method: 'DELETE', path: `${ADMIN}/accounts/delete`, token: op.secret, query: 'id=1' })).statusCode,
    204,
  );
  const [key, credit, number] = await Promise.all([
    cli(ctx, ['tokens', 'create', '--account', '1']),
    cli(ctx, ['credits', 'add', '--account', '1', '--amount', '5']),
    cli(ctx, ['numbers', 'add', '--account', '1', '--number', '55199']),
  ]);
  for (const res of [key, credit, number]) assert.match(failed(res, 'a command on a closed account').stderr, /account 1 is closed/);
  await assertLedgerAddsUp(ctx.store);
});
