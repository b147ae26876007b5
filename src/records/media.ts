import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, IntOrString, Str } from './common.ts';

/** The columns of `media` every read of a media selects: the record's, and `chunk_bytes` for reading its bytes. */
export const MEDIA_COLUMNS = ['id', 'file_name', 'mime_type', 'size', 'width', 'height', 'chunk_bytes', 'created_at'] as const;
/** A stored media (times in epoch seconds). */
export type MediaRow = Pick<Row<'media'>, (typeof MEDIA_COLUMNS)[number]>;

/** The columns of `mms_templates` an MMS template record shows (its MediaIds come from mms_template_media). */
export const MMS_TEMPLATE_COLUMNS = ['id', 'name', 'subject', 'message', 'created_at', 'updated_at'] as const;
/** A stored MMS template with its MediaIds in the order sent. */
export type MmsTemplateRow = Pick<Row<'mms_templates'>, (typeof MMS_TEMPLATE_COLUMNS)[number]> & { media_ids: number[] };

/** API.md §10.7 media record. */
export const MediaRecordSchema = Type.Object({
  Id: Int(),
  FileName: Str(),
  MimeType: Str(),
  Size: Int(),
  Width: Int(),
  Height: Int(),
  DateCreated: Str(),
});
export type MediaRecord = Static<typeof MediaRecordSchema>;

/** Maps a stored media to its record (API.md §10.7 field order). */
export const mediaRecord =
  (time: TimeFormat) =>
  (r: MediaRow): MediaRecord => ({
    Id: r.id,
    FileName: r.file_name,
    MimeType: r.mime_type,
    Size: r.size,
    Width: r.width,
    Height: r.height,
    DateCreated: time.dateTime(r.created_at),
  });

/** API.md §10.7 MMS template record. */
export const MmsTemplateRecordSchema = Type.Object({
  Id: Int(),
  Name: Str(),
  Subject: Str(),
  Message: Str(),
  MediaIds: Type.Array(Int()),
  DateCreated: Str(),
  DateUpdated: Str(),
});
export type MmsTemplateRecord = Static<typeof MmsTemplateRecordSchema>;

/** Maps a stored template to its record (API.md §10.7 field order). */
export const mmsTemplateRecord =
  (time: TimeFormat) =>
  (r: MmsTemplateRow): MmsTemplateRecord => ({
    Id: r.id,
    Name: r.name,
    Subject: r.subject,
    Message: r.message,
    MediaIds: r.media_ids,
    DateCreated: time.dateTime(r.created_at),
    DateUpdated: time.dateTime(r.updated_at),
  });

/** API.md §10.7 template `create` body (`update`: MmsTemplateUpdateBodySchema). */
export const MmsTemplateWriteBodySchema = Type.Object({
  Name: Type.String({ minLength: 3, maxLength: 64 }),
  Subject: Type.Optional(Type.String({ maxLength: 255 })),
  Message: Type.Optional(Type.String({ maxLength: 1600 })),
  MediaIds: Type.Array(IntOrString(), { minItems: 1, maxItems: 10, description: '1 to 10 media ids of the account' }),
});

/** API.md §10.7 template `update` body: any of the `create` fields; only those sent change. */
export const MmsTemplateUpdateBodySchema = Type.Partial(MmsTemplateWriteBodySchema);

/** API.md §10.7 `media/upload` body: multipart/form-data with the field `file`. */
export const MediaUploadBodySchema = Type.Object({
  file: Type.String({ format: 'binary', description: 'jpg, gif, bmp, png or tiff (by content), at most 70.00MB, not an animated GIF' }),
});
