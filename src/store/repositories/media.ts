import { boundCount } from '../prepared.ts';
import { containsPattern, containsText } from '../search.ts';
import { MEDIA_COLUMNS, MMS_TEMPLATE_COLUMNS as TEMPLATE_COLUMNS, type MediaRow, type MmsTemplateRow } from '../../records/media.ts';
import type { Db } from '../types.ts';

/**
 * MMS media and templates (API.md §10.7). Every query is scoped to the account
 * (API.md §1.2); chunk reads are reached only through a media row the account owns.
 */

/** Inserts the media row of an upload in progress (size and dimensions come with `finishMedia`). */
export async function insertMedia(
  db: Db,
  accountId: number,
  m: { fileName: string; mimeType: string; chunkBytes: number },
  now: number,
): Promise<number> {
  const { id } = await db
    .insertInto('media')
    .values({
      account_id: accountId,
      file_name: m.fileName,
      mime_type: m.mimeType,
      size: 0,
      width: 0,
      height: 0,
      chunk_bytes: m.chunkBytes,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** Writes chunk `seq` of a media. */
export async function insertChunk(db: Db, accountId: number, mediaId: number, seq: number, data: Buffer): Promise<void> {
  await db.insertInto('media_chunks').values({ account_id: accountId, media_id: mediaId, seq, data }).execute();
}

/** Sets the size and dimensions of an uploaded media. */
export async function finishMedia(db: Db, accountId: number, id: number, size: number, width: number, height: number): Promise<void> {
  await db.updateTable('media').set({ size, width, height }).where('account_id', '=', accountId).where('id', '=', id).execute();
}

/** The account's media with this id, if any. */
export async function findMedia(db: Db, accountId: number, id: number): Promise<MediaRow | undefined> {
  return db.selectFrom('media').select(MEDIA_COLUMNS).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

/** How many media the account has. */
export async function countMedia(db: Db, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('media')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One page of the account's media by id ascending. */
export async function listMedia(db: Db, accountId: number, limit: number, offset: number): Promise<MediaRow[]> {
  return db
    .selectFrom('media')
    .select(MEDIA_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset))
    .execute();
}

/** Chunk `seq` of the account's media, or undefined past the end. */
export async function readChunk(db: Db, accountId: number, mediaId: number, seq: number): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('media_chunks')
    .select('data')
    .where('media_id', '=', mediaId)
    .where('seq', '=', seq)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength) : undefined;
}

/**
 * Deletes the account's media: its chunks, its place in every template (API.md §10.7
 * "also removes it from templates"; the template's remaining MediaIds keep their order), and the row.
 * @returns false when the account has no such media.
 */
export async function deleteMedia(db: Db, accountId: number, id: number): Promise<boolean> {
  await db.deleteFrom('mms_template_media').where('account_id', '=', accountId).where('media_id', '=', id).execute();
  const owned = await db.selectFrom('media').select('id').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  if (!owned) return false;
  await db.deleteFrom('media_chunks').where('media_id', '=', id).where('account_id', '=', accountId).execute();
  await db.deleteFrom('media').where('account_id', '=', accountId).where('id', '=', id).execute();
  return true;
}

/** The ids among `ids` that are media of the account. */
export async function ownedMediaIds(db: Db, accountId: number, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('media')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((r) => r.id));
}

async function withMediaIds(db: Db, accountId: number, rows: Omit<MmsTemplateRow, 'media_ids'>[]): Promise<MmsTemplateRow[]> {
  if (rows.length === 0) return [];
  const links = await db
    .selectFrom('mms_template_media')
    .select(['template_id', 'media_id'])
    .where('account_id', '=', accountId)
    .where(
      'template_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('template_id')
    .orderBy('position')
    .execute();
  const byTemplate = new Map<number, number[]>();
  for (const l of links) {
    let list = byTemplate.get(l.template_id);
    if (!list) byTemplate.set(l.template_id, (list = []));
    list.push(l.media_id);
  }
  return rows.map((r) => ({ ...r, media_ids: byTemplate.get(r.id) ?? [] }));
}

/** The account's template with this id and its MediaIds, if any. */
export async function findTemplate(db: Db, accountId: number, id: number): Promise<MmsTemplateRow | undefined> {
  const row = await db
    .selectFrom('mms_templates')
    .select(TEMPLATE_COLUMNS)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? (await withMediaIds(db, accountId, [row]))[0] : undefined;
}

/** True when the account has a template with this id. */
export async function templateExists(db: Db, accountId: number, id: number): Promise<boolean> {
  return (
    (await db.selectFrom('mms_templates').select('id').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()) !==
    undefined
  );
}

/**
 * How many templates the account has; with `search` (msgsvc's `Search`, docs/API.md §10.7: trimmed,
 * not empty), how many of them have a Name containing it, ASCII case folded (src/store/search.ts).
 */
export async function countTemplates(db: Db, accountId: number, search?: string): Promise<number> {
  const pattern = search === undefined ? undefined : containsPattern(search);
  const row = await db
    .selectFrom('mms_templates')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .$if(pattern !== undefined, (qb) => qb.where(containsText(db, 'name', pattern)))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One page of the account's templates by id ascending (with `search`: as countTemplates), with their MediaIds. */
export async function listTemplates(db: Db, accountId: number, limit: number, offset: number, search?: string): Promise<MmsTemplateRow[]> {
  const pattern = search === undefined ? undefined : containsPattern(search);
  const rows = await db
    .selectFrom('mms_templates')
    .select(TEMPLATE_COLUMNS)
    .where('account_id', '=', accountId)
    .$if(pattern !== undefined, (qb) => qb.where(containsText(db, 'name', pattern)))
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset))
    .execute();
  return withMediaIds(db, accountId, rows);
}

/** Inserts a template. */
export async function insertTemplate(
  db: Db,
  accountId: number,
  t: { name: string; subject: string; message: string },
  now: number,
): Promise<number> {
  const { id } = await db
    .insertInto('mms_templates')
    .values({ account_id: accountId, name: t.name, subject: t.subject, message: t.message, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** Changes the fields given of a template. */
export async function changeTemplate(
  db: Db,
  accountId: number,
  id: number,
  t: { name?: string; subject?: string; message?: string },
  now: number,
): Promise<void> {
  await db
    .updateTable('mms_templates')
    .set({ ...t, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** Replaces a template's MediaIds (in this order). */
export async function setTemplateMedia(db: Db, accountId: number, templateId: number, mediaIds: readonly number[]): Promise<void> {
  await db.deleteFrom('mms_template_media').where('account_id', '=', accountId).where('template_id', '=', templateId).execute();
  if (mediaIds.length === 0) return;
  await db
    .insertInto('mms_template_media')
    .values(mediaIds.map((m, position) => ({ account_id: accountId, template_id: templateId, media_id: m, position })))
    .execute();
}

/** Deletes the account's template. @returns false when there is none. */
export async function deleteTemplate(db: Db, accountId: number, id: number): Promise<boolean> {
  await db.deleteFrom('mms_template_media').where('account_id', '=', accountId).where('template_id', '=', id).execute();
  const r = await db.deleteFrom('mms_templates').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * True when the account's template `id` holds at least one medium: an MMS can be sent with it
 * (API.md §10.7: a template whose media have all been deleted cannot be sent). False for a template
 * that is not the account's, or no longer exists (its MediaIds go with it).
 */
export async function templateHasMedia(db: Db, accountId: number, id: number): Promise<boolean> {
  const row = await db
    .selectFrom('mms_template_media')
    .select('media_id')
    .where('account_id', '=', accountId)
    .where('template_id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}
