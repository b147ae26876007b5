import { sql } from 'kysely';
import type { Store } from '../../src/store/db.ts';

/**
 * What a migrated database really holds, read from the database itself (not from src/store):
 * every table of the schema and its columns, on SQLite (sqlite_master, pragma_table_info; SQLite's
 * own sqlite_* tables left out) and PostgreSQL (information_schema, the current schema).
 */
export async function schemaColumns(store: Store): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (store.dialect === 'sqlite') {
    const tables = await sql<{ name: string }>`
      select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name`.execute(store.db);
    for (const { name } of tables.rows) {
      const columns = await sql<{ name: string }>`select name from pragma_table_info(${name}) order by cid`.execute(store.db);
      out.set(
        name,
        columns.rows.map((c) => c.name),
      );
    }
  } else {
    const rows = await sql<{ table_name: string; column_name: string }>`
      select c.table_name, c.column_name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
      order by c.table_name, c.ordinal_position`.execute(store.db);
    for (const r of rows.rows) {
      let list = out.get(r.table_name);
      if (!list) out.set(r.table_name, (list = []));
      list.push(r.column_name);
    }
  }
  return out;
}

/** Every row of `table`, every column, as the driver gives them (bytes as Buffers). */
export async function tableRows(store: Store, table: string): Promise<Record<string, unknown>[]> {
  const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(store.db);
  return rows;
}
