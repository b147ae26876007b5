import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The consent ledger of erased contacts (docs/API.md §10.2.1 `contacts/erase`): when a person's
 * data is erased, the entries of their contact's ledger (`contact_consent`) are copied here, with
 * the phone number replaced by its SHA-256 (lowercase hex of the E.164 digits without `+`, as
 * Contact.Number shows them), before the contact's deletion takes the originals: the proof of
 * consent outlives the person's data, and names no one.
 *
 * - `id` is the entry's id in `contact_consent`, kept (the ids are never reused: both stores draw
 *   them from the ledger's own sequence), so an entry keeps its identity across the erasure.
 * - `erased_at` is when the erasure happened (epoch seconds).
 * - Append-only, in the database too, as `contact_consent` is (migration 018): triggers refuse every
 *   UPDATE, and every DELETE while the account exists (PostgreSQL also refuses TRUNCATE). The one
 *   way rows go is the account's deletion (the foreign key cascades after the account's row is
 *   gone, so the trigger lets it through). Retention (MSGSVC_RETENTION_DAYS) keeps it, as it keeps
 *   the consent ledger.
 * - The index serves the one question asked of it: an account's entries for a number's hash.
 */
export function erasureMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('erased_consent')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('number_sha256', 'text', (c) => c.notNull())
        .addColumn('opted_out', 'integer', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('detail', 'text', (c) => c.notNull())
        .addColumn('carrier', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('erased_at', 'bigint', (c) => c.notNull())
        .addCheckConstraint('erased_consent_opted_out_ck', sql`opted_out in (0, 1)`)
        .addCheckConstraint('erased_consent_hash_ck', sql`length(number_sha256) = 64`)
        .execute();
      await db.schema.createIndex('erased_consent_hash_ix').on('erased_consent').columns(['account_id', 'number_sha256', 'id']).execute();
      if (dialect === 'sqlite') {
        await sql`
          CREATE TRIGGER erased_consent_no_update BEFORE UPDATE ON erased_consent
          BEGIN
            SELECT RAISE(ABORT, 'erased_consent is append-only: rows are never updated');
          END`.execute(db);
        await sql`
          CREATE TRIGGER erased_consent_no_delete BEFORE DELETE ON erased_consent
          WHEN EXISTS (SELECT 1 FROM accounts WHERE id = OLD.account_id)
          BEGIN
            SELECT RAISE(ABORT, 'erased_consent is append-only: rows go only with their account');
          END`.execute(db);
      } else {
        await sql`
          CREATE FUNCTION erased_consent_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF TG_OP = 'UPDATE' THEN
              RAISE EXCEPTION 'erased_consent is append-only: rows are never updated' USING ERRCODE = 'integrity_constraint_violation';
            ELSIF TG_OP = 'TRUNCATE' THEN
              RAISE EXCEPTION 'erased_consent is append-only: rows go only with their account' USING ERRCODE = 'integrity_constraint_violation';
            ELSIF EXISTS (SELECT 1 FROM accounts WHERE id = OLD.account_id) THEN
              RAISE EXCEPTION 'erased_consent is append-only: rows go only with their account' USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN OLD;
          END
          $$`.execute(db);
        await sql`
          CREATE TRIGGER erased_consent_no_update BEFORE UPDATE ON erased_consent
          FOR EACH ROW EXECUTE FUNCTION erased_consent_append_only()`.execute(db);
        await sql`
          CREATE TRIGGER erased_consent_no_delete BEFORE DELETE ON erased_consent
          FOR EACH ROW EXECUTE FUNCTION erased_consent_append_only()`.execute(db);
        await sql`
          CREATE TRIGGER erased_consent_no_truncate BEFORE TRUNCATE ON erased_consent
          FOR EACH STATEMENT EXECUTE FUNCTION erased_consent_append_only()`.execute(db);
      }
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
