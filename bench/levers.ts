/**
 * The SQLite levers of issue 15 §2, each measured on its own against a generated database, in one
 * process and on one thread, so that nothing but the lever differs between the two sides:
 *
 * - `read-tx`: a request's several reads inside one BEGIN … COMMIT against each statement taking
 *   its own read snapshot (contacts/find's three statements; a sms page's count and rows);
 * - `json-agg`: a 100-row page built by SQLite (json_group_array / json_object, the JSON text
 *   handed over as one string) against raw rows mapped to records in JavaScript and written with
 *   JSON.stringify (what msgsvc does);
 * - `checkpoint`: the latency of commits paced at a fixed rate (custom field entry updates, 4,000/s
 *   for 4 s by default: LEVERS_CHECKPOINT_RATE, LEVERS_CHECKPOINT_SECONDS) with SQLite's automatic
 *   checkpoint inside the commit against checkpoints on a thread of their own at several
 *   intervals (src/store/checkpointer.ts).
 *
 * Each side runs in alternating rounds; the median per round is reported (µs per operation).
 *
 *   node --import tsx bench/levers.ts [--db bench/.data/msgsvc-1000000.db] [--rounds 5] [--iterations 20000]
 *
 * The database is copied first (the checkpoint lever writes), so a bench data directory can be used.
 */
import SQLite from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { scheduledMessageRecord } from '../src/records/scheduled-messages.ts';
import { createTimeFormat } from '../src/lib/time.ts';
import { startCheckpointer } from '../src/store/checkpointer.ts';
import type { ScheduledMessageRow } from '../src/records/scheduled-messages.ts';

const { values: flags } = parseArgs({
  options: {
    db: { type: 'string', default: 'bench/.data/msgsvc-1000000.db' },
    rounds: { type: 'string', default: '5' },
    iterations: { type: 'string', default: '20000' },
    only: { type: 'string' },
  },
});
const rounds = Number(flags.rounds);
const iterations = Number(flags.iterations);
const only = flags.only ? new Set(flags.only.split(',')) : undefined;
if (!existsSync(flags.db)) throw new Error(`no database at ${flags.db}: run npm run bench once with --data-dir, or msgsvc generate`);
const summary = JSON.parse(readFileSync(`${flags.db}.json`, 'utf8')) as {
  accountId: number;
  contactIds: number[];
  entry: { id: number; customFieldId: number; contactId: number };
};
const dir = mkdtempSync(join(tmpdir(), 'msgsvc-levers-'));
const file = join(dir, 'levers.db');
copyFileSync(flags.db, file);
const ACCOUNT = summary.accountId;

function open(): SQLite.Database {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('cache_size = -8192');
  return db;
}

/** µs per call of `fn`, median over rounds, the two sides alternating. */
function compare(name: string, sides: Record<string, (i: number) => unknown>): Record<string, number> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  for (const fn of Object.values(sides)) for (let i = 0; i < Math.min(2000, iterations); i++) fn(i); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const [side, fn] of Object.entries(sides)) {
      const start = performance.now();
      for (let i = 0; i < iterations; i++) fn(i);
      samples[side]!.push(((performance.now() - start) * 1000) / iterations);
    }
  }
  const medians = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.sort((a, b) => a - b)[Math.floor(v.length / 2)]!]));
  console.log(
    `${name}: ${Object.entries(medians)
      .map(([k, v]) => `${k} ${v.toFixed(2)} µs`)
      .join(' · ')}`,
  );
  return medians;
}

const results: Record<string, unknown> = {};

if (!only || only.has('read-tx')) {
  const db = open();
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const numbers = db.prepare(`select "number_e164" from "contacts" where "account_id" = ? and "id" = ?`).pluck();
  const e164s = summary.contactIds.slice(0, 5000).map((id) => numbers.get(ACCOUNT, id) as string);
  const byE164 = db.prepare(
    `select "id", "number", "opted_out", "first_name", "last_name", "birthday", "email", "zip", "city", "created_at", "updated_at" from "contacts" where "account_id" = ? and "number_e164" = ?`,
  );
  const groupIds = db
    .prepare(`select "group_id" from "group_members" where "contact_id" = ? and "account_id" = ? order by "group_id"`)
    .pluck();
  const fieldIds = db
    .prepare(`select "custom_field_id" from "custom_field_entries" where "contact_id" = ? and "account_id" = ? order by "custom_field_id"`)
    .pluck();
  const find = (i: number) => {
    const c = byE164.get(ACCOUNT, e164s[i % e164s.length]) as { id: number };
    return [c, groupIds.all(c.id, ACCOUNT), fieldIds.all(c.id, ACCOUNT)];
  };
  results.readTxFind = compare('read-tx contacts/find (3 statements)', {
    'own snapshots': find,
    'one transaction': (i) => {
      begin.run();
      try {
        return find(i);
      } finally {
        commit.run();
      }
    },
  });
  const totals = db.prepare(`select "scheduled_messages", "scheduled_messages_version" from "list_totals" where "account_id" = ?`);
  const page = db
    .prepare(
      `select "id", "mobile_phone", "message", "scheduled_at", "status_id", "type_id", "mms_template_id", "subject" from "scheduled_messages" where "account_id" = ? order by "id" limit cast(? as integer) offset cast(? as integer)`,
    )
    .raw(true);
  const smsPage = () => [totals.get(ACCOUNT), page.all(ACCOUNT, 100, 0)];
  results.readTxSms = compare('read-tx sms page 1 (2 statements)', {
    'own snapshots': smsPage,
    'one transaction': () => {
      begin.run();
      try {
        return smsPage();
      } finally {
        commit.run();
      }
    },
  });
  db.close();
}

if (!only || only.has('json-agg')) {
  const db = open();
  const columns = ['id', 'mobile_phone', 'message', 'scheduled_at', 'status_id', 'type_id', 'mms_template_id', 'subject'];
  const raw = db
    .prepare(
      `select ${columns.map((c) => `"${c}"`).join(', ')} from "scheduled_messages" where "account_id" = ? order by "id" limit cast(? as integer) offset cast(? as integer)`,
    )
    .raw(true);
  const toRecord = scheduledMessageRecord(createTimeFormat('UTC'));
  const inJs = () => {
    const rows = raw.all(ACCOUNT, 100, 0) as unknown[][];
    const records = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const v = rows[i]!;
      records[i] = toRecord({
        id: v[0],
        mobile_phone: v[1],
        message: v[2],
        scheduled_at: v[3],
        status_id: v[4],
        type_id: v[5],
        mms_template_id: v[6],
        subject: v[7],
      } as ScheduledMessageRow);
    }
    return JSON.stringify(records);
  };
  // The same record, built by SQLite: DateTime as Y:m:d H:i:s in UTC, descriptions by CASE.
  const inSql = db
    .prepare(
      `select json_group_array(json_object('Id', "id", 'MobilePhone', "mobile_phone", 'Message', "message",
        'DateTime', strftime('%Y:%m:%d %H:%M:%S', "scheduled_at", 'unixepoch'),
        'Status_Id', "status_id", 'Status_Description', case "status_id" when 1 then 'Pending' when 2 then 'Action Required' when 3 then 'Approved and Scheduled' else '' end,
        'Type_Id', "type_id", 'Type_Description', case "type_id" when 1 then 'SMS' when 2 then 'MMS' else '' end,
        'MmsTemplateId', case when "type_id" = 2 and "mms_template_id" is not null then "mms_template_id" else '' end,
        'Subject', "subject"))
       from (select * from "scheduled_messages" where "account_id" = ? order by "id" limit cast(? as integer) offset cast(? as integer))`,
    )
    .pluck();
  results.jsonAgg = compare('json-agg sms page 1 (100 records)', {
    'rows + JS mapping + JSON.stringify': inJs,
    'json_group_array in SQLite': () => inSql.get(ACCOUNT, 100, 0),
  });
  db.close();
}

if (!only || only.has('checkpoint')) {
  // Commits paced at a fixed rate for a few seconds (several checkpoint intervals), so that
  // checkpoints really happen during the measurement: the latency of every commit, as a request
  // waiting behind it would see it.
  const seconds = Number(process.env.LEVERS_CHECKPOINT_SECONDS ?? 4);
  const rate = Number(process.env.LEVERS_CHECKPOINT_RATE ?? 4000);
  const measure = async (label: string, intervalMs: number) => {
    const db = open();
    let thread: ReturnType<typeof startCheckpointer> | undefined;
    if (intervalMs > 0) {
      db.pragma('journal_size_limit = 67108864');
      db.pragma('wal_autocheckpoint = 0');
      thread = startCheckpointer(file, intervalMs, () => db.pragma('wal_autocheckpoint = 1000'));
    } else {
      db.pragma('wal_autocheckpoint = 1000');
    }
    const update = db.prepare(`update "custom_field_entries" set "entry" = ?, "updated_at" = ? where "account_id" = ? and "id" = ?`);
    const ids = summary.contactIds.slice(0, 5000);
    const begin = db.prepare('BEGIN IMMEDIATE');
    const commit = db.prepare('COMMIT');
    const times: number[] = [];
    const started = performance.now();
    const total = seconds * rate;
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / rate;
      while (performance.now() < due) {
        // Spin to the next commit's time (the thread, if any, runs on the other core).
      }
      begin.run();
      update.run(`value ${i}`, i, ACCOUNT, ids[i % ids.length]);
      commit.run();
      // Latency from the commit's scheduled time: a stall delays every commit queued behind it.
      times.push((performance.now() - due) * 1000);
    }
    times.sort((a, b) => a - b);
    const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
    const line = { p50: q(0.5), p99: q(0.99), p999: q(0.999), max: times.at(-1)! };
    console.log(
      `checkpoint ${label}: ${rate}/s for ${seconds} s, latency µs p50 ${line.p50.toFixed(0)} p99 ${line.p99.toFixed(0)} p99.9 ${line.p999.toFixed(0)} max ${line.max.toFixed(0)}`,
    );
    results[`checkpoint ${label}`] = line;
    await thread?.close();
    db.close();
  };
  for (let r = 0; r < Math.min(rounds, 2); r++) {
    await measure('in the commit (wal_autocheckpoint 1000)', 0);
    for (const ms of [1000, 200, 50]) await measure(`on a thread every ${ms} ms`, ms);
  }
}

rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(results));
