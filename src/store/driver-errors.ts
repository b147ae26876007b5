import type { SqliteStatement } from 'kysely';
import { storeErrorOf } from './errors.ts';

/**
 * Where the drivers' errors become the store's typed errors (src/store/errors.ts): at the one
 * call that runs a statement, on every path a query takes. Reads pay nothing: a SELECT runs
 * untouched (a constraint can only refuse a write), and a write's translation costs a try/catch
 * (SQLite) or one promise (PostgreSQL).
 */

/** True for the text of a plain read (Kysely writes `select …` in lower case). */
function isSelect(sql: string): boolean {
  return sql.charCodeAt(0) === 0x73 /* s */ && sql.startsWith('select');
}

const translating = new WeakMap<SqliteStatement, SqliteStatement>();

/**
 * The statement Kysely runs on SQLite (its SqliteDatabase `prepare`): a SELECT as it is, any
 * other statement behind a view whose calls throw the store's typed error instead of the
 * driver's. One view per statement, made once.
 */
export function sqliteStatementFor(sql: string, statement: SqliteStatement): SqliteStatement {
  if (isSelect(sql)) return statement;
  let view = translating.get(statement);
  if (view === undefined) {
    view = {
      get reader() {
        return statement.reader;
      },
      all(parameters) {
        try {
          return statement.all(parameters);
        } catch (err) {
          throw storeErrorOf(err);
        }
      },
      run(parameters) {
        try {
          return statement.run(parameters);
        } catch (err) {
          throw storeErrorOf(err);
        }
      },
      iterate(parameters) {
        try {
          return statement.iterate(parameters);
        } catch (err) {
          throw storeErrorOf(err);
        }
      },
    };
    translating.set(statement, view);
  }
  return view;
}

function rethrowStoreError(err: unknown): never {
  throw storeErrorOf(err);
}

/** The part of a pg client this module touches. */
interface PgQueryable {
  query: (...args: never[]) => unknown;
}

/**
 * Makes a pg pool client's writes fail with the store's typed errors: called once per client, on
 * the pool's 'connect'. A SELECT's promise is returned as it is; a write's (INSERT, UPDATE,
 * DELETE, savepoints, raw SQL) gets its rejection translated. Queries with a callback or a
 * config object (Kysely's cursors) are not touched.
 */
export function translatePgErrors(client: PgQueryable): void {
  const query = client.query as (this: unknown, a?: unknown, b?: unknown, c?: unknown) => unknown;
  client.query = function (this: unknown, a?: unknown, b?: unknown, c?: unknown): unknown {
    const result = query.call(this, a, b, c);
    if (typeof a !== 'string' || c !== undefined || isSelect(a) || !(result instanceof Promise)) return result;
    return result.catch(rethrowStoreError);
  };
}
