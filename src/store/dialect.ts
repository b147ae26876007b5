/**
 * The SQL dialect of an open store. A leaf module: src/store/db.ts opens stores and runs the
 * migrations, and each migration (src/store/migrations/*) builds its DDL for a dialect, so the
 * name lives below both and neither imports the other for it.
 */
export type Dialect = 'sqlite' | 'postgres';
