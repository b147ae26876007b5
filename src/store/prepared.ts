import type SQLite from 'better-sqlite3';
import { PostgresAdapter, sql, type Compilable, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { cachedStatement, ownsOpenTransaction, sqliteHandle } from './db.ts';
import { storeErrorOf } from './errors.ts';
import type { Database } from './tables.ts';
import type { Db } from './types.ts';

/**
 * Queries built and compiled once, for the request path.
 *
 * `prepareQuery(build)` takes a function that builds a Kysely query from its arguments. It is
 * called once per database kind with placeholders instead of values, compiled, and from then on
 * only the parameters change: no query building or compiling per request. The SQL is Kysely's, so
 * it is the same on SQLite and PostgreSQL.
 *
 * Running: on SQLite the statement (prepared once, see cachedStatement) runs straight on
 * better-sqlite3, on the store's root handle when no transaction is open on its one connection,
 * and on the handle of a transaction opened by inTransaction. Otherwise (a transaction is open and
 * this query is not part of it, or on PostgreSQL) the compiled query goes through Kysely
 * (`executeQuery`), which waits for the connection lock exactly as before. Either way a write
 * refused on a constraint throws the store's typed error (src/store/errors.ts).
 */

// Statements in pluck mode (first column only) and in raw mode (rows as arrays), apart from the
// shared cache that Kysely also uses.
const pluckCaches = new WeakMap<SQLite.Database, Map<string, SQLite.Statement>>();
type RawEntry = { statement: SQLite.Statement; toRow: (values: unknown[]) => unknown };
const rawCaches = new WeakMap<SQLite.Database, Map<string, RawEntry>>();

function pluckStatement(sqlite: SQLite.Database, sql: string): SQLite.Statement {
  let cache = pluckCaches.get(sqlite);
  if (!cache) pluckCaches.set(sqlite, (cache = new Map<string, SQLite.Statement>()));
  const cached = cache.get(sql);
  if (cached && !cached.busy) return cached;
  const statement = sqlite.prepare(sql).pluck();
  if (!cached) cache.set(sql, statement);
  return statement;
}

/**
 * Every row of a query as objects, built in JavaScript from raw rows: better-sqlite3 builds row
 * objects property by property, which costs about as much again as reading the rows (measured:
 * 220 µs against 116 µs for a page of 100 scheduled messages); one object literal per row does not.
 */
function allRows(sqlite: SQLite.Database, sql: string, params: unknown[]): unknown[] {
  let cache = rawCaches.get(sqlite);
  if (!cache) rawCaches.set(sqlite, (cache = new Map<string, RawEntry>()));
  let entry = cache.get(sql);
  if (!entry || entry.statement.busy) {
    const statement = sqlite.prepare(sql);
    const names = statement.columns().map((c) => c.name);
    // Only plain, distinct column names take the fast path.
    if (new Set(names).size !== names.length || names.includes('__proto__')) return cachedStatement(sqlite, sql).all(params);
    statement.raw(true);
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- one compiled object literal per row shape; the names are JSON-quoted
    const toRow = new Function('v', `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`) as (
      values: unknown[],
    ) => unknown;
    entry = { statement, toRow };
    if (!cache.has(sql)) cache.set(sql, entry);
  }
  const raw = entry.statement.all(params) as unknown[][];
  const rows = new Array<unknown>(raw.length);
  for (let i = 0; i < raw.length; i++) rows[i] = entry.toRow(raw[i]!);
  return rows;
}

/**
 * The one text value a SQLite statement returns (its first column of its first row), run straight
 * on the connection; undefined when `db` is not SQLite, or when a transaction this query is not
 * part of is open on the connection (the caller then takes its portable path). For SQLite-only
 * statements with no Kysely form, such as the JSON pages of src/store/json-pages.ts.
 */
export function sqliteText(db: Db, sql: string, params: unknown[]): string | undefined {
  const sqlite = sqliteHandle(db);
  if (!sqlite || (sqlite.inTransaction && !ownsOpenTransaction(db))) return undefined;
  return pluckStatement(sqlite, sql).get(params) as string | undefined;
}

/** True when sqliteText can answer on `db` now (SQLite, and no transaction of another query open). */
export function sqliteDirect(db: Db): boolean {
  const sqlite = sqliteHandle(db);
  return sqlite !== undefined && (!sqlite.inTransaction || ownsOpenTransaction(db));
}

/** True when `db` talks to PostgreSQL. */
export const isPostgres = (db: Kysely<Database>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * The ids of a JSON array parameter as a one-column subquery, for `column IN (…)` or an
 * `INSERT … SELECT`: one statement shape whatever the list length, so it is prepared once
 * (SQLite `json_each`, PostgreSQL `json_array_elements_text`) instead of a statement with one
 * placeholder per id built and compiled on every request.
 */
export function jsonIds(db: Kysely<Database>, json: unknown): RawBuilder<number> {
  return isPostgres(db)
    ? sql<number>`(select cast(value as integer) from json_array_elements_text(cast(${json} as json)) as ids(value))`
    : sql<number>`(select value from json_each(${json}))`;
}

/**
 * A LIMIT or OFFSET value, bound as a parameter: `limit(boundCount(n))`.
 *
 * Why the cast: SQLite (3.53 here) lets the query planner read a bare bound LIMIT/OFFSET
 * parameter, and then marks the statement expired whenever that parameter is bound again, so a
 * prepared page query was compiled anew on every execution (measured: 13.7 µs against 8.2 µs for
 * the five-row numbers/index page). Behind a CAST the value is read at run time only. PostgreSQL
 * accepts the same SQL.
 */
export function boundCount(value: number): RawBuilder<number> {
  return sql<number>`cast(${value} as integer)`;
}

class Placeholder {
  constructor(readonly index: number) {}
}

interface Compiled {
  compiled: CompiledQuery;
  sql: string;
  /** Each parameter: a placeholder (argument index) or a constant that the builder wrote in. */
  slots: unknown[];
}

/**
 * `+column`: the column's value without letting it choose the index (SQLite's documented way of
 * disqualifying a term from driving the plan; PostgreSQL reads it as plain unary plus). For owner
 * checks (`account_id = ?`) on queries driven by a far more selective term (`contact_id IN (…)`, a
 * field id range): without statistics SQLite's planner otherwise prefers the equality on
 * `account_id` and reads every row of the account (O(account) per request instead of O(page)).
 */
export function ownerTerm(column: 'account_id'): RawBuilder<number> {
  return sql<number>`+${sql.ref(column)}`;
}

export interface PreparedQuery<A extends unknown[], R> {
  /** Every row. */
  all(db: Db, ...args: A): Promise<R[]>;
  /** The first column of every row (for one-column queries: no object per row on SQLite). */
  column(db: Db, ...args: A): Promise<R[keyof R][]>;
  /** The first row, if any. */
  first(db: Db, ...args: A): Promise<R | undefined>;
  /** Runs a write; resolves to the number of rows it changed. */
  run(db: Db, ...args: A): Promise<number>;
}

/**
 * Prepares a query. `build` must use each argument only as a value (a comparison operand,
 * `limit`, `offset`, a column value), never to choose the query's shape.
 */
export function prepareQuery<A extends unknown[], R>(build: (db: Kysely<Database>, ...args: A) => Compilable<R>): PreparedQuery<A, R> {
  // One compilation per dialect adapter (SQLite and PostgreSQL compile differently).
  const byAdapter = new WeakMap<object, Compiled>();

  function compiledFor(db: Db): Compiled {
    const adapter = db.getExecutor().adapter;
    let c = byAdapter.get(adapter);
    if (!c) {
      const placeholders = Array.from({ length: build.length - 1 }, (_, i) => new Placeholder(i)) as unknown as A;
      const compiled = build(db, ...placeholders).compile();
      c = { compiled, sql: compiled.sql, slots: [...compiled.parameters] };
      byAdapter.set(adapter, c);
    }
    return c;
  }

  function bind(c: Compiled, args: unknown[]): unknown[] {
    const out = new Array<unknown>(c.slots.length);
    for (let i = 0; i < c.slots.length; i++) {
      const slot = c.slots[i];
      out[i] = slot instanceof Placeholder ? args[slot.index] : slot;
    }
    return out;
  }

  async function viaKysely(db: Db, c: Compiled, params: unknown[]) {
    return db.executeQuery<R>({ ...c.compiled, parameters: params });
  }

  return {
    async all(db, ...args) {
      const c = compiledFor(db);
      const params = bind(c, args);
      const sqlite = sqliteHandle(db);
      if (sqlite && (!sqlite.inTransaction || ownsOpenTransaction(db))) {
        try {
          return allRows(sqlite, c.sql, params) as R[];
        } catch (err) {
          throw storeErrorOf(err);
        }
      }
      return (await viaKysely(db, c, params)).rows;
    },
    async column(db, ...args) {
      const c = compiledFor(db);
      const params = bind(c, args);
      const sqlite = sqliteHandle(db);
      if (sqlite && (!sqlite.inTransaction || ownsOpenTransaction(db))) {
        try {
          return pluckStatement(sqlite, c.sql).all(params) as R[keyof R][];
        } catch (err) {
          throw storeErrorOf(err);
        }
      }
      return (await viaKysely(db, c, params)).rows.map((row) => Object.values(row as object)[0] as R[keyof R]);
    },
    async first(db, ...args) {
      const c = compiledFor(db);
      const params = bind(c, args);
      const sqlite = sqliteHandle(db);
      if (sqlite && (!sqlite.inTransaction || ownsOpenTransaction(db))) {
        try {
          return cachedStatement(sqlite, c.sql).get(params) as R | undefined;
        } catch (err) {
          throw storeErrorOf(err);
        }
      }
      return (await viaKysely(db, c, params)).rows[0];
    },
    async run(db, ...args) {
      const c = compiledFor(db);
      const params = bind(c, args);
      const sqlite = sqliteHandle(db);
      if (sqlite && (!sqlite.inTransaction || ownsOpenTransaction(db))) {
        try {
          return cachedStatement(sqlite, c.sql).run(params).changes;
        } catch (err) {
          throw storeErrorOf(err);
        }
      }
      return Number((await viaKysely(db, c, params)).numAffectedRows ?? 0n);
    },
  };
}
