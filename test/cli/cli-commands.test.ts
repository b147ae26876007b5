import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createAccount, issueToken } from '../../src/domain/accounts.ts';
import { buildTestApp, withToken } from '../helpers/app.ts';
import { runCli, seedAccount, tempDir, type CliResult } from '../helpers/cli.ts';

/** Runs the CLI on the test's database with the demo off. */
function cli(dbPath: string, args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCli(args, { DATABASE_URL: dbPath, MSGSVC_DEMO: '0', ...env });
}

function ok(res: CliResult, what: string): CliResult {
  assert.equal(res.code, 0, `${what} failed (code ${res.code}).\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
  return res;
}

function failed(res: CliResult, what: string): CliResult {
  assert.ok(
    res.code !== 0 && res.code !== null,
    `${what} should fail, got code ${res.code}.\nstdout: ${res.stdout}\nstderr: ${res.stderr}`,
  );
  return res;
}

function withDb<T>(dbPath: string, fn: (db: Database.Database) => T): T {
  const db = new Database(dbPath, { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('msgsvc CLI', { concurrency: true }, () => {
  test('migrate creates the schema and can run again', async (t) => {
    const { dbPath } = tempDir(t);
    const first = ok(await cli(dbPath, ['migrate']), 'migrate');
    assert.match(first.stdout, /migrations applied/);
    const tables = withDb(dbPath, (db) =>
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
    );
    for (const name of ['accounts', 'api_tokens', 'credit_balances', 'account_numbers', 'contacts']) {
      assert.ok(tables.includes(name), `table ${name} missing: ${tables.join(', ')}`);
    }
    // Running it again is a no-op; the --database-url flag works as well as the environment.
    ok(await runCli(['--database-url', dbPath, 'migrate'], { MSGSVC_DEMO: '0' }), 'second migrate (--database-url)');
  });

  test('accounts create prints the new account', async (t) => {
    const { dbPath } = tempDir(t);
    const first = ok(await cli(dbPath, ['accounts', 'create', '--name', 'Acme Ltd']), 'accounts create');
    assert.deepEqual(JSON.parse(first.stdout), { id: 1, name: 'Acme Ltd' });
    const [secondRes, missingRes] = await Promise.all([
      cli(dbPath, ['accounts', 'create', '--name', 'Other']),
      cli(dbPath, ['accounts', 'create']),
    ]);
    const second = ok(secondRes, 'accounts create');
    assert.deepEqual(JSON.parse(second.stdout), { id: 2, name: 'Other' });
    const rows = withDb(dbPath, (db) => db.prepare('SELECT id, name FROM accounts ORDER BY id').all());
    assert.deepEqual(rows, [
      { id: 1, name: 'Acme Ltd' },
      { id: 2, name: 'Other' },
    ]);
    const missing = failed(missingRes, 'accounts create without --name');
    assert.match(missing.stderr, /--name/);
  });

  test('tokens create prints the token once and stores only its SHA-256 hash', async (t) => {
    const { dir, dbPath } = tempDir(t);
    // The account comes from the app's store, not from a CLI run (each costs ~0.5 s of CPU;
    // accounts create has its own test). The app stays open: the files checked below include its WAL.
    const ctx = await buildTestApp(t, {}, { dir });
    const account = await createAccount(ctx.store, 'Acme Ltd');
    const res = ok(await cli(dbPath, ['tokens', 'create', '--account', String(account), '--label', 'ci']), 'tokens create');
    assert.match(res.stderr, /token id 1 for account 1/);
    const lines = res.stdout.split('\n');
    assert.equal(lines.length, 2, `stdout should be exactly the token and a newline: ${JSON.stringify(res.stdout)}`);
    const token = lines[0]!;
    assert.equal(lines[1], '');
    assert.match(token, /^[A-Za-z0-9_-]{32,}$/);
    assert.ok(!res.stderr.includes(token), 'the token must not be repeated on stderr');

    const rows = withDb(dbPath, (db) => db.prepare('SELECT * FROM api_tokens').all() as Record<string, unknown>[]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.token_hash, sha256(token));
    assert.equal(rows[0]!.account_id, account);
    assert.equal(rows[0]!.label, 'ci');
    assert.equal(rows[0]!.revoked_at, null);
    // No column of any table holds the plaintext, and neither do the database files on disk.
    withDb(dbPath, (db) => {
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
      for (const table of tables) {
        for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[]) {
          for (const [col, v] of Object.entries(row)) {
            assert.ok(!String(v).includes(token), `${table}.${col} holds the plaintext token`);
          }
        }
      }
    });
    for (const file of readdirSync(dir)) {
      assert.ok(!readFileSync(join(dir, file)).includes(token), `${file} contains the plaintext token`);
    }

    // The printed token works against an app on the same database.
    const balance = await ctx.app.inject({ url: withToken('/v1/credits/balance', token) });
    assert.equal(balance.statusCode, 200);
    assert.equal(balance.body, '{"AvailableCredits":0}');
  });

  test('tokens revoke --id: the token then gets 401, other tokens keep working', async (t) => {
    const { dir, dbPath } = tempDir(t);
    const { account, token: other } = await seedAccount(dbPath);
    const ctx = await buildTestApp(t, {}, { dir });
    // A second token from the app's store (tokens create has its own test), the one revoked below.
    const { token } = await issueToken(ctx.store, account, 'test');
    assert.equal((await ctx.app.inject({ url: withToken('/v1/numbers/index', token) })).statusCode, 200);

    const id = withDb(
      dbPath,
      (db) => (db.prepare('SELECT id FROM api_tokens WHERE token_hash = ?').get(sha256(token)) as { id: number }).id,
    );
    const res = ok(await cli(dbPath, ['tokens', 'revoke', '--id', String(id)]), 'tokens revoke --id');
    assert.match(res.stdout, /revoked/);

    const after = await ctx.app.inject({ url: withToken('/v1/numbers/index', token) });
    assert.equal(after.statusCode, 401);
    assert.deepEqual(JSON.parse(after.body), {
      name: 'Unauthorized',
      message: 'Your request was made with invalid credentials.',
      code: 0,
      status: 401,
    });
    assert.equal((await ctx.app.inject({ url: withToken('/v1/numbers/index', other) })).statusCode, 200);

    const [again, unknownId] = await Promise.all([
      cli(dbPath, ['tokens', 'revoke', '--id', String(id)]),
      cli(dbPath, ['tokens', 'revoke', '--id', '999']),
    ]);
    assert.match(failed(again, 'revoking twice').stderr, /no live token/);
    assert.match(failed(unknownId, 'revoking an unknown id').stderr, /no live token/);
  });

  test('tokens revoke --token: the token then gets 401', async (t) => {
    const { dir, dbPath } = tempDir(t);
    const { token } = await seedAccount(dbPath);
    const ctx = await buildTestApp(t, {}, { dir });
    assert.equal((await ctx.app.inject({ url: withToken('/v1/credits/balance', token) })).statusCode, 200);

    ok(await cli(dbPath, ['tokens', 'revoke', '--token', token]), 'tokens revoke --token');
    assert.equal((await ctx.app.inject({ url: withToken('/v1/credits/balance', token) })).statusCode, 401);
    assert.equal(
      withDb(dbPath, (db) => (db.prepare('SELECT revoked_at FROM api_tokens').get() as { revoked_at: unknown }).revoked_at === null),
      false,
    );

    const [unknown, neither, both] = await Promise.all([
      cli(dbPath, ['tokens', 'revoke', '--token', 'not-a-token']),
      cli(dbPath, ['tokens', 'revoke']),
      cli(dbPath, ['tokens', 'revoke', '--id', '1', '--token', token]),
    ]);
    assert.match(failed(unknown, 'unknown token').stderr, /no live token/);
    assert.match(failed(neither, 'revoke without --id/--token').stderr, /--id or --token/);
    assert.match(failed(both, 'revoke with both').stderr, /--id or --token/);
  });

  test('credits set and add; the API shows the balance', async (t) => {
    const { dir, dbPath } = tempDir(t);
    const { account, token } = await seedAccount(dbPath);
    const a = String(account);
    assert.deepEqual(JSON.parse(ok(await cli(dbPath, ['credits', 'set', '--account', a, '--amount', '125']), 'credits set').stdout), {
      AvailableCredits: 125,
    });
    assert.deepEqual(JSON.parse(ok(await cli(dbPath, ['credits', 'add', '--account', a, '--amount', '-5']), 'credits add -5').stdout), {
      AvailableCredits: 120,
    });
    const ctx = await buildTestApp(t, {}, { dir });
    const res = await ctx.app.inject({ url: withToken('/v1/credits/balance', token) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"AvailableCredits":120}');
    const xml = await ctx.app.inject({ url: withToken('/v1/credits/balance', token), headers: { accept: 'application/xml' } });
    assert.equal(xml.body, '<?xml version="1.0" encoding="UTF-8"?>\n<response><AvailableCredits>120</AvailableCredits></response>\n');

    const [bad, badAccount, huge, overflow] = await Promise.all([
      cli(dbPath, ['credits', 'set', '--account', a, '--amount', '12abc']),
      cli(dbPath, ['credits', 'set', '--account', 'x', '--amount', '1']),
      cli(dbPath, ['credits', 'set', '--account', a, '--amount', '99999999999999999999']),
      cli(dbPath, ['credits', 'add', '--account', a, '--amount', String(Number.MAX_SAFE_INTEGER)]),
    ]);
    assert.match(failed(bad, 'credits set with a bad amount').stderr, /amount/);
    failed(badAccount, 'credits set with a bad account');
    // The balance stays an exact integer: amounts and results beyond 2^53-1 are refused.
    assert.match(failed(huge, 'credits set beyond the safe range').stderr, /amount/);
    assert.match(failed(overflow, 'credits add past the safe range').stderr, /balance would be/);
    assert.equal((await ctx.app.inject({ url: withToken('/v1/credits/balance', token) })).body, '{"AvailableCredits":120}');

    // AvailableCredits never goes below zero: a larger debit, or a negative set, is refused and changes nothing.
    const [tooMuch, negativeSet] = [
      await cli(dbPath, ['credits', 'add', '--account', a, '--amount', '-121']),
      await cli(dbPath, ['credits', 'set', '--account', a, '--amount', '-1']),
    ];
    assert.match(
      failed(tooMuch, 'credits add below zero').stderr,
      /balance would be -1: AvailableCredits cannot go below zero \(available: 120\)/,
    );
    assert.match(failed(negativeSet, 'credits set below zero').stderr, /cannot go below zero/);
    assert.equal((await ctx.app.inject({ url: withToken('/v1/credits/balance', token) })).body, '{"AvailableCredits":120}');
    assert.deepEqual(
      JSON.parse(ok(await cli(dbPath, ['credits', 'add', '--account', a, '--amount', '-120']), 'credits add to exactly zero').stdout),
      {
        AvailableCredits: 0,
      },
    );
  });

  test('--version prints the version of package.json', async (t) => {
    const { dbPath } = tempDir(t);
    const res = ok(await cli(dbPath, ['--version']), 'msgsvc --version');
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(res.stdout.trim(), pkg.version);
  });

  test('numbers add in all four statuses; numbers/index shows them, Blocked_Date set for 301/302', async (t) => {
    const { dir, dbPath } = tempDir(t);
    const { account, token } = await seedAccount(dbPath);
    const a = String(account);
    const added: [string, string, string][] = [
      ['55155', '0', '55155'],
      ['+1 555 010 0002', '1', '15550100002'],
      ['15550100003', '301', '15550100003'],
      ['(555) 010-0004', '302', '15550100004'],
    ];
    const descriptions: Record<string, string> = { 0: 'Active', 1: 'Inactive', 301: 'Temporarily blocked.', 302: 'Permanently blocked.' };
    // --status defaults to 0 (Active).
    ok(await cli(dbPath, ['numbers', 'add', '--account', a, '--number', '777888']), 'numbers add without --status');
    const results = await Promise.all(
      added.map(([number, status]) => cli(dbPath, ['numbers', 'add', '--account', a, '--number', number, '--status', status])),
    );
    added.forEach(([number, status, digits], i) => {
      const res = ok(results[i]!, `numbers add ${number}`);
      assert.deepEqual(JSON.parse(res.stdout), { Number: digits, Status_Id: Number(status), Status_Description: descriptions[status] });
    });

    const ctx = await buildTestApp(t, {}, { dir });
    const res = await ctx.app.inject({ url: withToken('/v1/numbers/index', token) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-pagination-total-count'], '5');
    const list = JSON.parse(res.body) as { Number: string; Status_Id: number; Status_Description: string; Blocked_Date: string | null }[];
    assert.equal(list.length, 5);
    for (const [, status, digits] of [...added, ['777888', '0', '777888'] as const]) {
      const rec = list.find((r) => r.Number === digits);
      assert.ok(rec, `number ${digits} missing from ${res.body}`);
      assert.deepEqual(Object.keys(rec), ['Number', 'Status_Id', 'Status_Description', 'Blocked_Date']);
      assert.equal(rec.Status_Id, Number(status));
      assert.equal(rec.Status_Description, descriptions[status]);
      if (status === '301' || status === '302') assert.match(String(rec.Blocked_Date), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      else assert.equal(rec.Blocked_Date, null);
    }

    const [badStatus, badNumber, duplicate] = await Promise.all([
      cli(dbPath, ['numbers', 'add', '--account', a, '--number', '55156', '--status', '5']),
      cli(dbPath, ['numbers', 'add', '--account', a, '--number', 'abc']),
      cli(dbPath, ['numbers', 'add', '--account', a, '--number', '55155', '--status', '1']),
    ]);
    assert.match(failed(badStatus, 'numbers add --status 5').stderr, /--status/);
    assert.match(failed(badNumber, 'numbers add --number abc').stderr, /abc/);
    const dup = failed(duplicate, 'numbers add of a number the account has');
    assert.match(dup.stderr, /already has the number 55155/);
    assert.ok(!/constraint/i.test(dup.stderr), `no raw SQL error expected: ${dup.stderr}`);
    assert.equal((await ctx.app.inject({ url: withToken('/v1/numbers/index', token) })).headers['x-pagination-total-count'], '5');
  });

  test('an unknown account gives a non-zero exit and a clear message', async (t) => {
    const { dbPath } = tempDir(t);
    await seedAccount(dbPath);
    const results = await Promise.all([
      cli(dbPath, ['tokens', 'create', '--account', '999']),
      cli(dbPath, ['credits', 'add', '--account', '999', '--amount', '10']),
      cli(dbPath, ['numbers', 'add', '--account', '999', '--number', '55155']),
    ]);
    for (const res of results) {
      failed(res, 'a command on account 999');
      assert.match(res.stderr, /no account with id 999/);
      assert.equal(res.stdout, '');
      assert.ok(!/\n\s+at /.test(res.stderr), `no stack trace expected: ${res.stderr}`);
    }
    withDb(dbPath, (db) => {
      assert.deepEqual(db.prepare('SELECT COUNT(*) AS n FROM api_tokens').get(), { n: 1 });
      assert.deepEqual(db.prepare('SELECT COUNT(*) AS n FROM account_numbers').get(), { n: 0 });
    });
  });

  test('a bad configuration value exits 2 and names the variable', async (t) => {
    const { dbPath } = tempDir(t);
    const cases: [string[], Record<string, string>, string][] = [
      [['serve'], { MSGSVC_RATE_LIMIT: 'abc' }, 'MSGSVC_RATE_LIMIT'],
      [['serve', '--rate-limit', '0'], {}, 'MSGSVC_RATE_LIMIT'],
      [['serve'], { MSGSVC_TIMEZONE: 'Mars/Base' }, 'MSGSVC_TIMEZONE'],
      [['migrate'], { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
      [['demo', '--json'], { MSGSVC_DEFAULT_REGION: 'XX' }, 'MSGSVC_DEFAULT_REGION'],
    ];
    const results = await Promise.all(cases.map(([args, env]) => cli(dbPath, args, env)));
    results.forEach((res, i) => {
      const [args, env, name] = cases[i]!;
      assert.equal(res.code, 2, `${args.join(' ')} with ${JSON.stringify(env)}: code ${res.code}\nstderr: ${res.stderr}`);
      assert.ok(res.stderr.includes(name), `stderr should name ${name}: ${res.stderr}`);
      assert.ok(!/\n\s+at /.test(res.stderr), `no stack trace expected: ${res.stderr}`);
      assert.equal(res.stdout, '');
    });
  });
});
