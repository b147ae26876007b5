import { sql, type Kysely, type CreateTableBuilder } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The initial schema. Ownership is part of the schema: every child row references its parent by
 * (account_id, id), so a row can never point at another account's record, whatever the code does.
 */
export function initialMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const epoch = 'bigint';

  function withId<T extends string>(builder: CreateTableBuilder<T, never>) {
    return builder.addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()));
  }

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await withId(db.schema.createTable('accounts'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', epoch, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('credit_balances')
        .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
        .addColumn('available_credits', epoch, (c) => c.notNull().defaultTo(0))
        .addColumn('updated_at', epoch, (c) => c.notNull())
        .execute();

      await withId(db.schema.createTable('api_tokens'))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('label', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('revoked_at', epoch)
        .execute();

      await withId(db.schema.createTable('account_numbers'))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('number', 'text', (c) => c.notNull())
        .addColumn('status_id', 'integer', (c) => c.notNull())
        .addColumn('blocked_at', epoch)
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addUniqueConstraint('account_numbers_account_number_uq', ['account_id', 'number'])
        .addUniqueConstraint('account_numbers_account_id_uq', ['account_id', 'id'])
        .addCheckConstraint('account_numbers_status_ck', sql`status_id in (0, 1, 301, 302)`)
        .execute();

      await withId(db.schema.createTable('contacts'))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('number', 'text', (c) => c.notNull())
        .addColumn('number_e164', 'text', (c) => c.notNull())
        .addColumn('opted_out', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('first_name', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('last_name', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('birthday', 'text')
        .addColumn('email', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('zip', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('city', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('updated_at', epoch, (c) => c.notNull())
        .addUniqueConstraint('contacts_account_e164_uq', ['account_id', 'number_e164'])
        .addUniqueConstraint('contacts_account_id_uq', ['account_id', 'id'])
        .execute();

      await withId(db.schema.createTable('groups'))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('note', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('keyword_id', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('parent_id', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('updated_at', epoch, (c) => c.notNull())
        .addUniqueConstraint('groups_account_id_uq', ['account_id', 'id'])
        .execute();

      await db.schema
        .createTable('group_members')
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('group_id', 'integer', (c) => c.notNull())
        .addColumn('contact_id', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('group_members_pk', ['group_id', 'contact_id'])
        .addForeignKeyConstraint('group_members_group_fk', ['account_id', 'group_id'], 'groups', ['account_id', 'id'], (c) =>
          c.onDelete('cascade'),
        )
        .addForeignKeyConstraint('group_members_contact_fk', ['account_id', 'contact_id'], 'contacts', ['account_id', 'id'], (c) =>
          c.onDelete('cascade'),
        )
        .execute();
      await db.schema.createIndex('group_members_contact_ix').on('group_members').columns(['contact_id', 'group_id']).execute();

      await withId(db.schema.createTable('custom_fields'))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('updated_at', epoch, (c) => c.notNull())
        .addUniqueConstraint('custom_fields_account_id_uq', ['account_id', 'id'])
        .execute();

      await withId(db.schema.createTable('custom_field_entries'))
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('custom_field_id', 'integer', (c) => c.notNull())
        .addColumn('contact_id', 'integer', (c) => c.notNull())
        .addColumn('entry', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('updated_at', epoch, (c) => c.notNull())
        .addUniqueConstraint('custom_field_entries_field_contact_uq', ['custom_field_id', 'contact_id'])
        .addUniqueConstraint('custom_field_entries_account_id_uq', ['account_id', 'id'])
        .addForeignKeyConstraint(
          'custom_field_entries_field_fk',
          ['account_id', 'custom_field_id'],
          'custom_fields',
          ['account_id', 'id'],
          (c) => c.onDelete('cascade'),
        )
        .addForeignKeyConstraint('custom_field_entries_contact_fk', ['account_id', 'contact_id'], 'contacts', ['account_id', 'id'], (c) =>
          c.onDelete('cascade'),
        )
        .execute();
      await db.schema
        .createIndex('custom_field_entries_contact_ix')
        .on('custom_field_entries')
        .columns(['contact_id', 'custom_field_id'])
        .execute();

      await withId(db.schema.createTable('scheduled_messages'))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('mobile_phone', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('scheduled_at', epoch, (c) => c.notNull())
        .addColumn('status_id', 'integer', (c) => c.notNull())
        .addColumn('type_id', 'integer', (c) => c.notNull())
        .addColumn('mms_template_id', 'integer')
        .addColumn('subject', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addCheckConstraint('scheduled_messages_status_ck', sql`status_id in (1, 2, 3)`)
        .addCheckConstraint('scheduled_messages_type_ck', sql`type_id in (1, 2)`)
        .execute();
      await db.schema.createIndex('scheduled_messages_account_ix').on('scheduled_messages').columns(['account_id', 'id']).execute();

      await withId(db.schema.createTable('keyword_reservations'))
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('account_number_id', 'integer', (c) => c.notNull())
        .addColumn('keyword', 'text', (c) => c.notNull())
        .addColumn('keyword_key', 'text', (c) => c.notNull())
        .addColumn('autoreply_message', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addUniqueConstraint('keyword_reservations_number_keyword_uq', ['account_number_id', 'keyword_key'])
        .addForeignKeyConstraint(
          'keyword_reservations_number_fk',
          ['account_id', 'account_number_id'],
          'account_numbers',
          ['account_id', 'id'],
          (c) => c.onDelete('cascade'),
        )
        .execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
