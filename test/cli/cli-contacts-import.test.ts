/**
 * `msgsvc contacts import --account ID FILE` (API.md §10.2; issue 10 "CSV import"): the real
 * command in a child process, on each store (SQLite, and PostgreSQL when reachable).
 * It imports as POST /v1/contacts/import does and prints the same report (stdout, JSON); progress
 * goes to stderr, a bar redrawn in place on a terminal and one line per 10 % otherwise; a file
 * rejected whole (unknown column) writes nothing and exits 1.
 */
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { createAccount, issueToken } from '../../src/domain/accounts.ts';
import { caseKey } from '../../src/domain/text.ts';
import { insertCustomField } from '../../src/store/repositories/custom-fields.ts';
import { insertGroup } from '../../src/store/repositories/groups.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { BIN, childEnv, ROOT, runCli, type CliResult } from '../helpers/cli.ts';
import { contactFromDb, nowSeconds, snapshotAccount } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

/** The DATABASE_URL of the test app's database, for the child. */
function databaseUrl(ctx: TestApp): string {
  return ctx.config.database.kind === 'postgres' ? ctx.config.database.url : ctx.dbPath;
}

function cli(ctx: TestApp, args: string[]): Promise<CliResult> {
  return runCli(args, { DATABASE_URL: databaseUrl(ctx), MSGSVC_DEMO: '0' }, 120_000);
}

function ok(res: CliResult, what: string): CliResult {
  assert.equal(res.code, 0, `${what} failed (code ${res.code}).\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
  return res;
}

async function fixture(ctx: TestApp, name: string) {
  const account = await createAccount(ctx.store, name);
  const { token } = await issueToken(ctx.store, account, 'test');
  const now = nowSeconds();
  const groupA = await insertGroup(ctx.store.db, account, { name: 'Group A', note: '', keywordId: 0, parentId: 0 }, now);
  const tier = await insertCustomField(ctx.store.db, account, 'Loyalty Tier', caseKey('Loyalty Tier'), now);
  return { account, token, groupA, tier };
}

/** The account's contacts as the API shows them, less what differs between two accounts (ids, times, groups). */
async function contactsOf(ctx: TestApp, account: number) {
  const rows = await ctx.store.db.selectFrom('contacts').select('id').where('account_id', '=', account).orderBy('id').execute();
  const out = [];
  for (const r of rows) {
    const { Number, OptedOut, FirstName, LastName, BirthDay, Email, Zip, City, GroupIds, CustomFieldIds } = await contactFromDb(ctx, r.id);
    const entries = await ctx.store.db.selectFrom('custom_field_entries').select('entry').where('contact_id', '=', r.id).execute();
    out.push({
      Number,
      OptedOut,
      FirstName,
      LastName,
      BirthDay,
      Email,
      Zip,
      City,
      groups: GroupIds.length,
      fields: CustomFieldIds.length,
      entries: entries.map((e) => e.entry),
    });
  }
  return out;
}

const PROGRESS_LINE = /^\[([#.]{30})\] +(\d+)% ([\d,]+)\/([\d,]+) bytes [\d.]+s$/;

storeTest('contacts import: the same rows and the same report as POST /v1/contacts/import', async (t) => {
  const ctx = await buildTestApp(t);
  const viaCli = await fixture(ctx, 'Via CLI');
  const viaApi = await fixture(ctx, 'Via API');
  const csv = (groupId: number) =>
    '\uFEFFloyalty tier,Number,FirstName,Email,OptedOut,GroupIds\r\n' +
    `Gold,+15550120001,"Ann\r\nMarie",ann@example.com,1,${groupId}\r\n` + // 2-3
    `Silver,(555) 012-0002,Bob,not-an-email,,\r\n` + // 4: bad Email
    `,15550120001,Annie,,0,\r\n` + // 5: OptedOut 1 → 0 refused
    `Bronze,5550120003,Cat,,,${groupId}\r\n` + // 6
    `,+15550120003,Cathy,cat@example.com,1,\r\n`; // 7: updates line 6's contact
  const file = join(ctx.dir, 'contacts.csv');
  writeFileSync(file, csv(viaCli.groupA));
  const expected = {
    Created: 2,
    Updated: 1,
    Failed: 2,
    Errors: [
      { Line: 4, Field: 'Email', Message: 'Email is not a valid email address.' },
      { Line: 5, Field: 'OptedOut', Message: 'Opted Out can only be cleared by the contact texting START.' },
    ],
  };
  const res = ok(await cli(ctx, ['contacts', 'import', '--account', String(viaCli.account), file]), 'contacts import');
  assert.equal(res.stdout, `${JSON.stringify(expected)}\n`);
  assert.match(res.stderr, /^2 created, 1 updated, 2 failed$/m);
  const api = await ctx.app.inject({
    method: 'POST',
    url: `/v1/contacts/import?access_token=${viaApi.token}`,
    headers: { 'content-type': 'text/csv' },
    payload: csv(viaApi.groupA),
  });
  assert.equal(api.statusCode, 200);
  assert.equal(api.body, JSON.stringify(expected));
  const written = await contactsOf(ctx, viaCli.account);
  assert.deepEqual(written, await contactsOf(ctx, viaApi.account));
  assert.deepEqual(written, [
    {
      Number: '15550120001',
      OptedOut: 1,
      FirstName: 'Ann\r\nMarie',
      LastName: '',
      BirthDay: '0000-00-00',
      Email: 'ann@example.com',
      Zip: '',
      City: '',
      groups: 1,
      fields: 1,
      entries: ['Gold'],
    },
    {
      Number: '15550120003',
      OptedOut: 1,
      FirstName: 'Cathy',
      LastName: '',
      BirthDay: '0000-00-00',
      Email: 'cat@example.com',
      Zip: '',
      City: '',
      groups: 1,
      fields: 1,
      entries: ['Bronze'],
    },
  ]);
});

storeTest('contacts import off a terminal: one progress line per 10 %, then the summary and the report', async (t) => {
  const ctx = await buildTestApp(t);
  const f = await fixture(ctx, 'Progress');
  const rows = 12_000;
  const lines = ['Number,FirstName,Email'];
  for (let i = 0; i < rows; i++) lines.push(`+1555${String(6000000 + i)},Name ${i},${i % 1000 === 7 ? 'bad' : `n${i}@example.com`}`);
  const file = join(ctx.dir, 'many.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const size = Buffer.byteLength(`${lines.join('\n')}\n`);
  const res = ok(await cli(ctx, ['contacts', 'import', '--account', String(f.account), file]), 'contacts import');
  const report = JSON.parse(res.stdout) as { Created: number; Updated: number; Failed: number; Errors: { Line: number }[] };
  assert.deepEqual(
    { ...report, Errors: report.Errors.map((e) => e.Line) },
    { Created: rows - 12, Updated: 0, Failed: 12, Errors: Array.from({ length: 12 }, (_, i) => i * 1000 + 9) },
  );
  const err = res.stderr.trimEnd().split('\n');
  assert.equal(err.at(-1), `${rows - 12} created, 0 updated, 12 failed`);
  const progress = err.slice(0, -1);
  assert.ok(progress.length >= 5 && progress.length <= 11, `progress lines:\n${res.stderr}`);
  let lastTenth = -1;
  for (const line of progress) {
    const m = PROGRESS_LINE.exec(line);
    assert.ok(m, `a progress line: ${JSON.stringify(line)}`);
    const percent = Number(m[2]);
    assert.ok(Math.floor(percent / 10) > lastTenth, `one line per 10 %:\n${res.stderr}`);
    lastTenth = Math.floor(percent / 10);
    assert.equal(m[4], size.toLocaleString('en-US'));
    assert.equal(m[1], '#'.repeat(Math.round((Number(m[3]!.replaceAll(',', '')) / size) * 30)).padEnd(30, '.'));
    assert.ok(!line.includes('\r'));
  }
  assert.match(progress.at(-1)!, /\] 100% /);
  assert.equal(
    await ctx.store.db
      .selectFrom('contacts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', f.account)
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n)),
    rows - 12,
  );
});

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

storeTest(
  'contacts import on a terminal: a bar redrawn in place',
  { skip: hasScript ? false : 'needs script(1) for a pseudo-terminal' },
  async (t) => {
    const ctx = await buildTestApp(t);
    const f = await fixture(ctx, 'Terminal');
    const lines = ['Number'];
    for (let i = 0; i < 5000; i++) lines.push(`+1555${String(7000000 + i)}`);
    const file = join(ctx.dir, 'tty.csv');
    writeFileSync(file, lines.join('\n'));
    const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
    const command = [process.execPath, BIN, 'contacts', 'import', '--account', String(f.account), file].map(quote).join(' ');
    // script(1) runs the command on a pseudo-terminal: stdout and stderr both go to it.
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        'script',
        ['-qefc', command, '/dev/null'],
        { cwd: ROOT, env: childEnv({ DATABASE_URL: databaseUrl(ctx), MSGSVC_DEMO: '0' }), timeout: 120_000 },
        (err, stdout) => (err ? reject(new Error(`${err.message}\n${stdout}`)) : resolve(String(stdout))),
      );
    });
    const bars = output.match(/\r\[[#.]{30}\] +\d+% [\d,]+\/[\d,]+ bytes [\d.]+s/g) ?? [];
    assert.ok(bars.length >= 2, `the bar is drawn, then redrawn in place with \\r:\n${JSON.stringify(output)}`);
    assert.match(output, /\r\[#{30}\] 100% [^\n]*\r?\n5000 created, 0 updated, 0 failed\r?\n/);
    assert.match(output, /\{"Created":5000,"Updated":0,"Failed":0,"Errors":\[\]\}\r?\n/);
  },
);

storeTest('contacts import: an unknown column writes nothing (exit 1, the 422 list); a bad account or file is an error', async (t) => {
  const ctx = await buildTestApp(t);
  const f = await fixture(ctx, 'Rejected');
  const before = await snapshotAccount(ctx, f.account);
  const file = join(ctx.dir, 'unknown.csv');
  writeFileSync(file, 'Number,FirstName,Nickname\n+15550121001,Ann,Annie\n');
  const res = await cli(ctx, ['contacts', 'import', '--account', String(f.account), file]);
  assert.equal(res.code, 1, res.stderr);
  assert.equal(res.stdout, '');
  assert.equal(res.stderr, 'msgsvc: file rejected, nothing written: [{"field":"file","message":"Unknown column: Nickname."}]\n');
  assert.deepEqual(await snapshotAccount(ctx, f.account), before);

  const good = join(ctx.dir, 'good.csv');
  writeFileSync(good, 'Number\n+15550121002\n');
  const noAccount = await cli(ctx, ['contacts', 'import', '--account', '987654', good]);
  assert.equal(noAccount.code, 1);
  assert.equal(noAccount.stderr, 'msgsvc: no account with id 987654\n');
  const noFile = await cli(ctx, ['contacts', 'import', '--account', String(f.account), join(ctx.dir, 'missing.csv')]);
  assert.equal(noFile.code, 1);
  assert.equal(noFile.stderr, `msgsvc: cannot read ${join(ctx.dir, 'missing.csv')}\n`);
  const noArg = await cli(ctx, ['contacts', 'import', good]);
  assert.notEqual(noArg.code, 0);
  assert.match(noArg.stderr, /--account/);
  assert.deepEqual(await snapshotAccount(ctx, f.account), before);
});
