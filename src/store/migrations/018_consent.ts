import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The consent ledger (docs/API.md §14.4.2 contacts/consent): `contact_consent`, one row per change
 * of a contact's OptedOut, written in the transaction of the change (src/domain/consent.ts).
 *
 * Append-only, in the database too: triggers refuse every UPDATE, and every DELETE while the
 * contact still exists, on both stores (PostgreSQL also refuses TRUNCATE). The one way rows go is
 * the contact's deletion: the foreign key (account_id, contact_id) → contacts cascades, and the
 * cascade runs after the contact's row is gone, so the trigger lets it through. An account's
 * deletion goes the same way (its contacts cascade, then their ledgers); the ledger has no
 * foreign key of its own to `accounts`, so no cascade can reach a row before its contact is gone.
 *
 * The index serves the one read, a contact's ledger by id ascending (Id order is the order of
 * the changes: one transaction writes one contact's change at a time).
 */
export function consentMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('contact_consent')
        .addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('contact_id', 'integer', (c) => c.notNull())
        .addColumn('opted_out', 'integer', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('detail', 'text', (c) => c.notNull())
        .addColumn('carrier', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addForeignKeyConstraint('contact_consent_contact_fk', ['account_id', 'contact_id'], 'contacts', ['account_id', 'id'], (c) =>
          c.onDelete('cascade'),
        )
        .addCheckConstraint('contact_consent_opted_out_ck', sql`opted_out in (0, 1)`)
        .addCheckConstraint('contact_consent_source_ck', sql`source in ('keyword', 'api', 'import', 'console')`)
        .execute();
      await db.schema.createIndex('contact_consent_contact_ix').on('contact_consent').columns(['account_id', 'contact_id', 'id']).execute();
      if (dialect === 'sqlite') {
        await sql`
          CREATE TRIGGER contact_consent_no_update BEFORE UPDATE ON contact_consent
          BEGIN
            SELECT RAISE(ABORT, 'contact_consent is append-only: rows are never updated');
          END`.execute(db);
        await sql`
          CREATE TRIGGER contact_consent_no_delete BEFORE DELETE ON contact_consent
          WHEN EXISTS (SELECT 1 FROM contacts WHERE account_id = OLD.account_id AND id = OLD.contact_id)
          BEGIN
            SELECT RAISE(ABORT, 'contact_consent is append-only: rows go only with their contact');
          END`.execute(db);
      } else {
        await sql`
          CREATE FUNCTION contact_consent_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF TG_OP = 'UPDATE' THEN
              RAISE EXCEPTION 'contact_consent is append-only: rows are never updated' USING ERRCODE = 'integrity_constraint_violation';
            ELSIF TG_OP = 'TRUNCATE' THEN
              RAISE EXCEPTION 'contact_consent is append-only: rows go only with their contact' USING ERRCODE = 'integrity_constraint_violation';
            ELSIF EXISTS (SELECT 1 FROM contacts WHERE account_id = OLD.account_id AND id = OLD.contact_id) THEN
              RAISE EXCEPTION 'contact_consent is append-only: rows go only with their contact' USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN OLD;
          END
          $$`.execute(db);
        await sql`
          CREATE TRIGGER contact_consent_no_update BEFORE UPDATE ON contact_consent
          FOR EACH ROW EXECUTE FUNCTION contact_consent_append_only()`.execute(db);
        await sql`
          CREATE TRIGGER contact_consent_no_delete BEFORE DELETE ON contact_consent
          FOR EACH ROW EXECUTE FUNCTION contact_consent_append_only()`.execute(db);
        await sql`
          CREATE TRIGGER contact_consent_no_truncate BEFORE TRUNCATE ON contact_consent
          FOR EACH STATEMENT EXECUTE FUNCTION contact_consent_append_only()`.execute(db);
      }
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
