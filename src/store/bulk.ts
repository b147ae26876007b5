import { sql, type Insertable, type Selectable } from 'kysely';
import type SQLite from 'better-sqlite3';
import { sqliteHandle, type Store } from './db.ts';
import type { Database } from './tables.ts';
import type { Db } from './types.ts';

/**
 * Bulk loading for the data generator (`msgsvc generate`, `npm run bench`): multi-row INSERTs
 * inside large transactions. The SQL is built by Kysely, so it is the same statement on SQLite
 * and PostgreSQL; on SQLite each statement shape is compiled and prepared once and run straight
 * on the connection (no per-batch query building), which loads a million contacts with their
 * memberships, entries and messages in well under two minutes.
 *
 * Not for the request path: callers own the database while they load (nothing else may use the
 * store's SQLite connection during `bulkTransaction`).
 */

/** Tables the generator fills in bulk. */
export type BulkTable =
  'contacts' | 'groups' | 'group_members' | 'custom_fields' | 'custom_field_entries' | 'scheduled_messages' | 'messages';

type Row<T extends BulkTable> = Insertable<Database[T]>;

export interface BulkWriter {
  /** Inserts the rows (all with the same keys, in the same order). */
  insert<T extends BulkTable>(table: T, rows: readonly Row<T>[]): Promise<void>;
  /** Inserts the rows and returns `columns` of each new row (in no particular order). */
  insertReturning<T extends BulkTable, C extends keyof Selectable<Database[T]> & string>(
    table: T,
    rows: readonly Row<T>[],
    columns: readonly C[],
  ): Promise<Pick<Selectable<Database[T]>, C>[]>;
}

// SQLite allows 32766 bound parameters per statement, PostgreSQL 65535; stay well below both.
const MAX_PARAMS = 8000;
const MAX_ROWS = 500;

function batchSize(columns: number): number {
  return Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMS / columns)));
}

function chunks<T>(rows: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** A compiled multi-row INSERT of one shape (table, row count, returning columns) on SQLite. */
interface Shape {
  statement: SQLite.Statement;
  columns: string[];
}

function sqliteWriter(db: Db, sqlite: SQLite.Database): BulkWriter {
  const shapes = new Map<string, Shape>();

  function flatten(rows: readonly Record<string, unknown>[], columns: readonly string[]): unknown[] {
    const params: unknown[] = new Array(rows.length * columns.length);
    let k = 0;
    for (const row of rows) for (const c of columns) params[k++] = row[c];
    return params;
  }

  // Compiles the statement for this shape once with Kysely and checks that our flattening of the
  // rows gives exactly Kysely's parameters, so later batches can skip the query builder.
  function shapeFor(table: BulkTable, rows: readonly Record<string, unknown>[], returning: readonly string[]): Shape {
    const columns = Object.keys(rows[0]!);
    const key = `${table}|${rows.length}|${columns.join(',')}|${returning.join(',')}`;
    let shape = shapes.get(key);
    if (shape) return shape;
    const query = db.insertInto(table).values(rows as never);
    const compiled = (returning.length > 0 ? query.returning(returning as never) : query).compile();
    const params = flatten(rows, columns);
    const same = params.length === compiled.parameters.length && params.every((v, i) => v === compiled.parameters[i]);
    if (!same) throw new Error(`bulk insert into ${table}: rows must all have the same keys`);
    shape = { statement: sqlite.prepare(compiled.sql), columns };
    shapes.set(key, shape);
    return shape;
  }

  return {
    // better-sqlite3 writes synchronously; the promise is the BulkWriter's shape (callers await it).
    insert(table, rows) {
      const size = batchSize(Object.keys(rows[0] ?? {}).length);
      for (const batch of chunks(rows as readonly Record<string, unknown>[], size)) {
        const shape = shapeFor(table, batch, []);
        shape.statement.run(...flatten(batch, shape.columns));
      }
      return Promise.resolve();
    },
    insertReturning(table, rows, columns) {
      const size = batchSize(Object.keys(rows[0] ?? {}).length);
      const out: never[] = [];
      for (const batch of chunks(rows as readonly Record<string, unknown>[], size)) {
        const shape = shapeFor(table, batch, columns);
        for (const r of shape.statement.all(...flatten(batch, shape.columns))) out.push(r as never);
      }
      return Promise.resolve(out);
    },
  };
}

function kyselyWriter(db: Db): BulkWriter {
  return {
    async insert(table, rows) {
      const size = batchSize(Object.keys(rows[0] ?? {}).length);
      for (const batch of chunks(rows, size)) await db.insertInto(table).values(batch).execute();
    },
    async insertReturning(table, rows, columns) {
      const size = batchSize(Object.keys(rows[0] ?? {}).length);
      const out: never[] = [];
      for (const batch of chunks(rows, size)) {
        const res = await db
          .insertInto(table)
          .values(batch as never)
          .returning(columns as never)
          .execute();
        for (const r of res) out.push(r as never);
      }
      return out;
    },
  };
}

/**
 * Runs `fn` (a whole load, made of bulkTransaction calls) with the connection tuned for it: on
 * SQLite a 256 MiB page cache, so index pages are written once instead of being evicted and
 * re-read, and synchronous=OFF (a crash during the load loses the load, not older data).
 * The settings are put back afterwards. On PostgreSQL, ANALYZE runs once the load is done.
 */
export async function withBulkSettings<T>(store: Store, fn: () => Promise<T>): Promise<T> {
  const sqlite = sqliteHandle(store.db);
  if (!sqlite) {
    const result = await fn();
    // Fresh statistics for the planner: until autovacuum gets to a table loaded in one go, its
    // estimates stay those of the empty table, and a deep page's anchors (src/store/anchors.ts)
    // took 50 s instead of half a second at a million contacts.
    await sql`analyze`.execute(store.db);
    return result;
  }
  const cache = sqlite.pragma('cache_size', { simple: true });
  const synchronous = sqlite.pragma('synchronous', { simple: true });
  sqlite.pragma('cache_size = -262144');
  sqlite.pragma('synchronous = OFF');
  try {
    return await fn();
  } finally {
    sqlite.pragma(`cache_size = ${Number(cache)}`);
    sqlite.pragma(`synchronous = ${Number(synchronous)}`);
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  }
}

/**
 * Runs `fn` in one transaction with a bulk writer: it commits when `fn` resolves and rolls back
 * when it throws. Nothing else may use the store while it runs.
 */
export async function bulkTransaction<T>(store: Store, fn: (writer: BulkWriter) => Promise<T>): Promise<T> {
  const sqlite = sqliteHandle(store.db);
  if (!sqlite) return store.db.transaction().execute((tx) => fn(kyselyWriter(tx)));
  sqlite.exec('BEGIN IMMEDIATE');
  try {
    const result = await fn(sqliteWriter(store.db, sqlite));
    sqlite.exec('COMMIT');
    return result;
  } catch (err) {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    throw err;
  }
}
