import { sql, type ColumnDefinitionBuilder, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Keys, people and the audit log (docs/API.md §15).
 *
 * - `api_tokens` become keys: every token that exists is named `default` with scope `*`. A key's
 *   `prefix` is the first 8 characters of its secret; a token made before this migration has no
 *   known secret (only its hash was ever kept), so its prefix is filled in the first time it is
 *   used. A roll keeps the previous hash in `old_hash` until `old_expires_at` (the grace).
 * - `users`: people who sign in to the console, one account each; `email_key` is the address in
 *   lower case, unique in the whole service. Invites and resets keep only the code's hash.
 * - `user_recovery_codes`, `passkeys`, `webauthn_challenges`: two-factor and passkeys.
 * - `sessions`: the console's sessions, by the hash of the cookie's value; a session acts as a user
 *   or (signed in with a key) as a key.
 * - `sign_in_failures`: the failed sign-ins of the last 15 minutes, by email and by IP, so that the
 *   lockout holds across every instance sharing the database.
 * - `audit_log`: one entry per change, sign-in and sign-out, written in the change's transaction.
 */
export function keysPeopleAuditMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const id = (c: ColumnDefinitionBuilder) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement());
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const alter = (f: (t: ReturnType<typeof db.schema.alterTable>) => { execute(): Promise<void> }) =>
        f(db.schema.alterTable('api_tokens')).execute();
      await alter((t) => t.addColumn('name', 'text', (c) => c.notNull().defaultTo('default')));
      await alter((t) => t.addColumn('prefix', 'text', (c) => c.notNull().defaultTo('')));
      await alter((t) => t.addColumn('scopes', 'text', (c) => c.notNull().defaultTo('["*"]')));
      await alter((t) => t.addColumn('allowed_ips', 'text', (c) => c.notNull().defaultTo('[]')));
      await alter((t) => t.addColumn('expires_at', 'bigint'));
      await alter((t) => t.addColumn('last_used_at', 'bigint'));
      await alter((t) => t.addColumn('last_ip', 'text', (c) => c.notNull().defaultTo('')));
      await alter((t) => t.addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(0)));
      await alter((t) => t.addColumn('old_hash', 'text'));
      await alter((t) => t.addColumn('old_expires_at', 'bigint'));
      await sql`UPDATE api_tokens SET updated_at = created_at`.execute(db);
      await db.schema.createIndex('api_tokens_old_hash_ix').on('api_tokens').column('old_hash').execute();
      await db.schema.createIndex('api_tokens_account_ix').on('api_tokens').columns(['account_id', 'id']).execute();

      await db.schema
        .createTable('users')
        .addColumn('id', idType, id)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('email_key', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('invite_hash', 'text', (c) => c.unique())
        .addColumn('invite_expires_at', 'bigint')
        .addColumn('totp_secret', 'text')
        .addColumn('totp_pending', 'text')
        .addColumn('totp_last_step', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('two_factor', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_sign_in_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('users_account_id_uq', ['account_id', 'id'])
        .addCheckConstraint('users_role_ck', sql`role in ('owner', 'admin', 'member', 'viewer')`)
        .execute();
      await db.schema.createIndex('users_account_ix').on('users').columns(['account_id', 'id']).execute();

      await db.schema
        .createTable('user_recovery_codes')
        .addColumn('id', idType, id)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema.createIndex('user_recovery_codes_user_ix').on('user_recovery_codes').columns(['user_id', 'code_hash']).execute();

      await db.schema
        .createTable('passkeys')
        .addColumn('id', idType, id)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('credential_id', 'text', (c) => c.notNull().unique())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('transports', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('passkeys_user_ix').on('passkeys').column('user_id').execute();

      await db.schema
        .createTable('webauthn_challenges')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('challenge', 'text', (c) => c.notNull())
        .addColumn('user_id', 'integer')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('sessions')
        .addColumn('id', idType, id)
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('key_id', 'integer', (c) => c.references('api_tokens.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user_ix').on('sessions').column('user_id').execute();

      await db.schema
        .createTable('sign_in_failures')
        .addColumn('id', idType, id)
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sign_in_failures_subject_ix').on('sign_in_failures').columns(['subject', 'at']).execute();

      await db.schema
        .createTable('audit_log')
        .addColumn('id', idType, id)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('object_id', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_log_account_ix').on('audit_log').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('audit_log_created_ix').on('audit_log').column('created_at').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const t of ['audit_log', 'sign_in_failures', 'sessions', 'webauthn_challenges', 'passkeys', 'user_recovery_codes', 'users']) {
        await db.schema.dropTable(t).execute();
      }
      await db.schema.dropIndex('api_tokens_old_hash_ix').execute();
      await db.schema.dropIndex('api_tokens_account_ix').execute();
      for (const c of [
        'name',
        'prefix',
        'scopes',
        'allowed_ips',
        'expires_at',
        'last_used_at',
        'last_ip',
        'updated_at',
        'old_hash',
        'old_expires_at',
      ]) {
        await db.schema.alterTable('api_tokens').dropColumn(c).execute();
      }
    },
  };
}
