import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * MMS media and templates (API.md §10.7):
 * - `media`: one row per uploaded file (its record fields); the bytes live in `media_chunks`, in
 *   order (`seq` from 0), every chunk MEDIA_CHUNK_BYTES long but the last, so every instance can
 *   serve them and a backup holds them. A download by Range finds its first chunk by arithmetic.
 * - `mms_templates` and `mms_template_media` (its MediaIds, in the order sent). Deleting a media
 *   removes it from every template (its rows here go with it).
 */
export function mediaMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const blob = dialect === 'postgres' ? 'bytea' : 'blob';
  const epoch = 'bigint';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('media')
        .addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('size', epoch, (c) => c.notNull())
        .addColumn('width', 'integer', (c) => c.notNull())
        .addColumn('height', 'integer', (c) => c.notNull())
        .addColumn('chunk_bytes', 'integer', (c) => c.notNull())
        .addColumn('created_at', epoch, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('media_account_ix').on('media').columns(['account_id', 'id']).execute();
      await db.schema
        .createTable('media_chunks')
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('media_id', 'integer', (c) => c.notNull().references('media.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('data', blob, (c) => c.notNull())
        .addPrimaryKeyConstraint('media_chunks_pk', ['media_id', 'seq'])
        .execute();
      await db.schema
        .createTable('mms_templates')
        .addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('updated_at', epoch, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mms_templates_account_ix').on('mms_templates').columns(['account_id', 'id']).execute();
      await db.schema
        .createTable('mms_template_media')
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('template_id', 'integer', (c) => c.notNull().references('mms_templates.id').onDelete('cascade'))
        .addColumn('media_id', 'integer', (c) => c.notNull().references('media.id').onDelete('cascade'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('mms_template_media_pk', ['template_id', 'position'])
        .execute();
      await db.schema.createIndex('mms_template_media_media_ix').on('mms_template_media').columns(['media_id']).execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
