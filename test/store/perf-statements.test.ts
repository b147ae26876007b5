/**
 * Page queries stay prepared (src/store/prepared.ts, boundCount): SQLite marks a statement expired,
 * and compiles it again, every time a bare `LIMIT ?` / `OFFSET ?` parameter is bound; behind
 * `cast(? as integer)` the plan does not depend on the value (measured in docs/PERFORMANCE.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { boundCount } from '../../src/store/prepared.ts';
import type { Database as Tables } from '../../src/store/tables.ts';

test('boundCount binds LIMIT and OFFSET behind a CAST, on SQLite and PostgreSQL', () => {
  const sqlite = new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
  const pg = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: {} as never }) });
  for (const [db, limit, offset] of [
    [sqlite, 'cast(? as integer)', 'cast(? as integer)'],
    [pg, 'cast($2 as integer)', 'cast($3 as integer)'],
  ] as const) {
    const q = db
      .selectFrom('account_numbers')
      .select('id')
      .where('account_id', '=', 1)
      .orderBy('id')
      .limit(boundCount(100))
      .offset(boundCount(200))
      .compile();
    assert.ok(q.sql.endsWith(`limit ${limit} offset ${offset}`), q.sql);
    assert.deepEqual(q.parameters, [1, 100, 200]);
  }
});

test('every LIMIT and OFFSET of the store goes through boundCount', () => {
  const dir = join(import.meta.dirname, '../../src/store/repositories');
  const bare: string[] = [];
  for (const file of readdirSync(dir)) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(/\.(limit|offset)\(([^)]*)\)?/g)) if (!m[2]!.startsWith('boundCount(')) bare.push(`${file}: ${m[0]}`);
  }
  assert.deepEqual(bare, []);
});
