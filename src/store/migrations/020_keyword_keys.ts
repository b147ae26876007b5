import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Keyword keys of several words (docs/API.md §10.5, §11.5): a keyword's key
 * (`keyword_reservations.keyword_key`, unique on its number) was NFKC, trimmed, lower case; it now
 * also makes each run of white space one space (src/domain/text.ts `keywordKey`), so that `JOIN  NOW`
 * and `join now` are one keyword and an inbound text `join now` finds it. This rewrites the keys
 * stored before, oldest reservation first. A reservation whose new key another one on its number
 * already holds (`JOIN NOW` and `JOIN  NOW`, both reserved before) keeps its old key: it can never
 * be texted (as before this change, when no keyword holding a space could be), and
 * `keyword/update` can rename it. Keys are computed here, not imported: a migration does what it
 * did when it was written.
 */
const PAGE = 1000;

function newKey(keyword: string): string {
  return keyword.normalize('NFKC').trim().toLowerCase().replace(/\s+/g, ' ');
}

export function keywordKeysMigration(dialect: Dialect) {
  void dialect;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (let after = 0; ;) {
        const { rows } = await sql<{ id: number; number: string; keyword: string; keyword_key: string }>`
          select id, number, keyword, keyword_key from keyword_reservations where id > ${after} order by id limit ${PAGE}`.execute(db);
        for (const r of rows) {
          const key = newKey(r.keyword);
          if (key === r.keyword_key) continue;
          const taken = await sql`select 1 from keyword_reservations where number = ${r.number} and keyword_key = ${key}`.execute(db);
          if (taken.rows.length === 0) await sql`update keyword_reservations set keyword_key = ${key} where id = ${r.id}`.execute(db);
        }
        if (rows.length < PAGE) break;
        after = Number(rows[rows.length - 1]!.id);
      }
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
