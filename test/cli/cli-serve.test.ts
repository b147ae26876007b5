import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import Database from 'better-sqlite3';
import { XMLValidator } from 'fast-xml-parser';
import { spawnServe, tempDir, waitForHttp } from '../helpers/cli.ts';
import { freePort } from '../helpers/net.ts';

const BANNER_END = 'More demo accounts:';

function countAccounts(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM accounts').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Runs one shell line and returns its output. */
function sh(line: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', line], { timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Runs a banner curl line with `extra` appended, plus a trailer line with the status and content type. */
async function curl(line: string, extra = ''): Promise<{ status: number; contentType: string; body: string }> {
  const res = await sh(`${line}${extra} -w '\\n%{http_code} %{content_type}'`);
  assert.equal(res.code, 0, `curl failed: ${line}\n${res.stderr}`);
  const cut = res.stdout.lastIndexOf('\n');
  const [status, ...type] = res.stdout.slice(cut + 1).split(' ');
  return { status: Number(status), contentType: type.join(' '), body: res.stdout.slice(0, cut) };
}

describe('msgsvc serve: first start', { concurrency: true }, () => {
  test('an empty database gets a demo account and a banner whose curl lines all work in JSON and XML; SIGTERM exits 0; a second start prints no banner', async (t) => {
    const { dbPath } = tempDir(t);
    const port = await freePort();
    const env = { DATABASE_URL: dbPath, PORT: String(port), MSGSVC_DEMO: undefined, LOG_LEVEL: 'warn' };
    const server = spawnServe(t, [], env);
    const stdout = await server.waitForStdout((s) => s.includes(BANNER_END));

    const base = `http://127.0.0.1:${port}`;
    const tokenLine = /Access token \(shown once; only its hash is stored\): (\S+)/.exec(stdout);
    assert.ok(tokenLine, `banner shows the token:\n${stdout}`);
    // The console's address, to sign in with the token shown: the token is in no URL but the curl lines'.
    assert.ok(
      stdout
        .split('\n')
        .includes(
          `Console: ${base}/console   (choose "Sign in with a key" and paste the access token above; invite people from its People page)`,
        ),
      `banner names the console:\n${stdout}`,
    );
    for (const l of stdout.split('\n')) if (!l.trim().startsWith('curl ')) assert.ok(!/https?:\/\/\S*access_token/.test(l), l);
    const curls = stdout
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('curl '));
    assert.equal(curls.length, 11, `11 curl lines expected:\n${stdout}`);
    const paths = [
      '/v1/numbers/index',
      '/v1/credits/balance',
      '/v1/sms/single-schedule-messages',
      '/v1/contacts/find',
      '/v1/groups/update',
      '/v1/custom-contact-fields/update',
      '/v1/custom-contact-fields-entry/update',
      '/v1/keyword/reserve',
      '/v1/sms/send',
      '/v1/sms/schedule',
      '/v1/sandbox/inbound',
    ];
    curls.forEach((line, i) => {
      assert.ok(line.includes(`'${base}${paths[i]}?`), `curl line ${i + 1} should call ${base}${paths[i]}: ${line}`);
      assert.ok(line.includes(`access_token=${encodeURIComponent(tokenLine[1]!)}`), line);
    });
    assert.equal(countAccounts(dbPath), 1);

    for (const line of curls) {
      const json = await curl(line);
      assert.ok(json.status >= 200 && json.status < 300, `JSON: ${json.status} ${json.body}\n${line}`);
      assert.equal(json.contentType, 'application/json; charset=UTF-8', line);
      assert.doesNotThrow(() => JSON.parse(json.body), `JSON body of ${line}: ${json.body}`);

      const xml = await curl(line, " -H 'Accept: application/xml'");
      assert.ok(xml.status >= 200 && xml.status < 300, `XML: ${xml.status} ${xml.body}\n${line}`);
      assert.equal(xml.contentType, 'application/xml; charset=UTF-8', line);
      assert.ok(xml.body.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<response'), xml.body);
      assert.equal(XMLValidator.validate(xml.body), true, `XML body of ${line}: ${xml.body}`);
    }
    const reserve = await curl(curls[7]!);
    assert.equal(reserve.status, 201);

    const exit = await server.stop();
    assert.deepEqual(exit, { code: 0, signal: null }, `SIGTERM should exit 0; stderr:\n${server.stderr}`);

    // Second start on the same database: no banner, no new account.
    const port2 = await freePort();
    const again = spawnServe(t, [], { ...env, PORT: String(port2) });
    const res = await waitForHttp(`http://127.0.0.1:${port2}/v1/credits/balance?access_token=${encodeURIComponent(tokenLine[1]!)}`);
    assert.equal(res.status, 200);
    // 2500 less the banner's two sends (its JSON and XML runs), one credit each, of which the second
    // may be refunded (the STOP line can opt its recipient out before the dispatcher takes it:
    // Rejected, API.md §11.6), less the two scheduled messages' credits once the scheduler
    // has approved them (within its poll interval: maybe not yet when the first server stopped),
    // and less what the check reserves for the demo's own scheduled messages (ten approved: five
    // SMS at 1 credit, five MMS at 3, 20 credits; src/domain/demo.ts), checked within a second too.
    const balance = /^\{"AvailableCredits":(\d+)\}$/.exec(await res.text());
    assert.ok(balance && Number(balance[1]) >= 2476 && Number(balance[1]) <= 2499, `balance: ${balance?.[0]}`);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(!again.stdout.includes('demo account') && !again.stdout.includes('curl '), `no banner expected:\n${again.stdout}`);
    assert.equal(countAccounts(dbPath), 1);
    assert.deepEqual(await again.stop(), { code: 0, signal: null });
  });

  test('first start: the demo account has a week of message history: sms/stats buckets on 5 or more days, matching sms/index, credits adding up', async (t) => {
    const { dbPath } = tempDir(t);
    const port = await freePort();
    const server = spawnServe(t, [], { DATABASE_URL: dbPath, PORT: String(port), MSGSVC_DEMO: undefined, LOG_LEVEL: 'warn' });
    const stdout = await server.waitForStdout((s) => s.includes(BANNER_END));
    const token = encodeURIComponent(/Access token \(shown once; only its hash is stored\): (\S+)/.exec(stdout)![1]!);
    const base = `http://127.0.0.1:${port}/v1`;
    const get = async (path: string) => {
      const res = await fetch(`${base}/${path}${path.includes('?') ? '&' : '?'}access_token=${token}`);
      assert.equal(res.status, 200, path);
      return { body: await res.json(), total: Number(res.headers.get('x-pagination-total-count')) };
    };
    type Bucket = {
      Time: string;
      Outbound: number;
      Inbound: number;
      Delivered: number;
      Undelivered: number;
      Failed: number;
      Rejected: number;
      Credits: number;
    };
    const days = (await get('sms/stats')).body as Bucket[];
    const busy = days.filter((b) => b.Outbound + b.Inbound > 0);
    assert.ok(busy.length >= 5, `buckets with messages on 5 or more days: ${JSON.stringify(days)}`);
    // Every whole day looks real; today's bucket (the last) holds only the hours since midnight,
    // which shortly after midnight may be a single message, and the first bucket only the hours
    // since the history began a week ago at this time of day (late in the day: one message or two).
    const today = days[days.length - 1];
    const first = days.find((b) => b.Outbound + b.Inbound > 0);
    for (const b of busy)
      if (b !== today && b !== first) assert.ok(b.Delivered > 0 && b.Inbound > 0, `a realistic day: ${JSON.stringify(b)}`);
    const hours = (await get('sms/stats?interval=hour')).body as Bucket[];
    const sum = (list: Bucket[], k: keyof Omit<Bucket, 'Time'>) => list.reduce((n, b) => n + b[k], 0);
    const counts = {
      Outbound: (await get('sms/index?Direction=Outbound')).total,
      Inbound: (await get('sms/index?Direction=Inbound')).total,
      Delivered: (await get('sms/index?Status_Id=3')).total,
      Undelivered: (await get('sms/index?Status_Id=4')).total,
      Failed: (await get('sms/index?Status_Id=5')).total,
      Rejected: (await get('sms/index?Status_Id=6')).total,
    };
    for (const k of Object.keys(counts) as (keyof typeof counts)[]) {
      assert.equal(sum(days, k), counts[k], `${k}: sms/stats by day against sms/index`);
      assert.equal(sum(hours, k), counts[k], `${k}: sms/stats by hour against sms/index`);
    }
    assert.ok(counts.Undelivered > 0 && counts.Failed > 0, JSON.stringify(counts));
    assert.equal(counts.Delivered + counts.Undelivered + counts.Failed, counts.Outbound, 'every outbound message is in a final state');
    // Credits: what sms/index shows as kept (all but Failed, refunded) is what sms/stats counts; the
    // balance is 2500 less what the check reserved for the demo's scheduled messages once none is
    // Pending (made as sms/schedule makes them, checked within a second): 1 credit an approved SMS,
    // 3 an approved MMS.
    type Message = { Status_Id: number; Credits: number; Segments: number; DateSent: string | null; Direction: string };
    const all: Message[] = [];
    for (let page = 1; all.length < counts.Outbound + counts.Inbound; page++)
      all.push(...((await get(`sms/index?page=${page}`)).body as Message[]));
    const kept = all.filter((m) => m.Status_Id !== 5 && m.Status_Id !== 6).reduce((n, m) => n + m.Credits, 0);
    assert.ok(kept > 0);
    assert.equal(sum(days, 'Credits'), kept);
    for (const m of all) assert.equal(m.Credits, m.Direction === 'Outbound' ? m.Segments : 0);
    type Scheduled = { Status_Id: number; Type_Id: number };
    let scheduled: Scheduled[] = [];
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      scheduled = (await get('sms/single-schedule-messages')).body as Scheduled[];
      if (scheduled.every((m) => m.Status_Id !== 1)) break;
    }
    assert.ok(
      scheduled.length > 0 && scheduled.every((m) => m.Status_Id !== 1),
      `the demo's scheduled messages checked: ${JSON.stringify(scheduled)}`,
    );
    const reserved = scheduled.filter((m) => m.Status_Id === 3).reduce((n, m) => n + (m.Type_Id === 2 ? 3 : 1), 0);
    assert.deepEqual((await get('credits/balance')).body, { AvailableCredits: 2500 - reserved });
    // Nothing to dispatch: still the same after the dispatcher has had its turns.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await get('sms/index?Status_Id=1')).total + (await get('sms/index?Status_Id=2')).total, 0);
    assert.equal((await get('sms/index?Status_Id=3')).total, counts.Delivered);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });

  test('MSGSVC_DEMO=0 on an empty database prints no banner and creates no account', async (t) => {
    const { dbPath } = tempDir(t);
    const port = await freePort();
    const server = spawnServe(t, [], { DATABASE_URL: dbPath, PORT: String(port), MSGSVC_DEMO: '0', LOG_LEVEL: 'warn' });
    const res = await waitForHttp(`http://127.0.0.1:${port}/v1/numbers/index?access_token=nope`);
    assert.equal(res.status, 401);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(!server.stdout.includes('demo account') && !server.stdout.includes('curl '), `no banner expected:\n${server.stdout}`);
    assert.equal(countAccounts(dbPath), 0);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });

  test('serve --port 0: the banner shows the port actually bound', async (t) => {
    const { dbPath } = tempDir(t);
    const server = spawnServe(t, ['--port', '0'], { DATABASE_URL: dbPath, LOG_LEVEL: 'warn' });
    const stdout = await server.waitForStdout((s) => s.includes(BANNER_END));
    const m = /'http:\/\/127\.0\.0\.1:(\d+)\/v1\/credits\/balance\?access_token=([^']+)'/.exec(stdout);
    assert.ok(m, stdout);
    assert.notEqual(m[1], '0');
    const res = await fetch(`http://127.0.0.1:${m[1]}/v1/credits/balance?access_token=${m[2]}`);
    assert.equal(res.status, 200);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });
});
