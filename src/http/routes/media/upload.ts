import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { fileError, MEDIA_MAX_BYTES, MEDIA_MESSAGES, storeUpload } from '../../../domain/media.ts';
import type { MediaRow } from '../../../records/media.ts';
import { MediaRecordSchema, MediaUploadBodySchema, mediaRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';
import { HttpError } from '../../wire.ts';
import { systemClock } from '../../../lib/time.ts';
import { withoutIdleTimeout } from '../../../lib/socket.ts';

/** The one body media type media/upload reads (API.md §10.7). */
const MULTIPART = 'multipart/form-data';

/**
 * Parses a multipart/form-data body with busboy and hands the part `file` (the first one with a
 * file name) to `onFile` as it arrives; other parts are read and dropped. Resolves with what
 * `onFile` resolved to (undefined when there was no file part), once the whole body has been read.
 * @throws what `onFile` threw (after the rest of the body was drained), what the body failed with
 *   (413 past the route's limit, a client gone away), or 400 for a body busboy cannot parse.
 */
function readUpload<T>(body: Readable, contentType: string, onFile: (name: string, file: Readable) => Promise<T>): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      // fileSize one byte past the limit: storeUpload sees the excess and answers the API.md §10.7 message.
      bb = busboy({
        headers: { 'content-type': contentType },
        limits: { files: 1, fileSize: MEDIA_MAX_BYTES + 1, fields: 50, parts: 100, fieldSize: 65_536 },
      });
    } catch {
      body.on('error', () => {});
      body.resume();
      reject(new HttpError(415, 'Unsupported Media Type: send the file as multipart/form-data with the field "file".'));
      return;
    }
    let work: Promise<T> | undefined;
    let current: Readable | undefined;
    let failure: Error | undefined;
    let settled = false;
    // Settles once: after the handler's work (if any) has finished, so nothing is left writing.
    const settle = () => {
      if (settled) return;
      settled = true;
      if (work === undefined) return failure !== undefined ? reject(failure) : resolve(undefined);
      work.then(
        (v) => (failure !== undefined ? reject(failure) : resolve(v)),
        // storeUpload rejects with an Error.
        (err: Error) => reject(failure ?? err),
      );
    };
    const fail = (err: Error) => {
      failure ??= err;
      current?.destroy(err);
      body.unpipe(bb);
      body.resume();
      settle();
    };
    bb.on('file', (field, file, info) => {
      if (field !== 'file' || work !== undefined || failure !== undefined) {
        // A skipped part still errors when the form is cut short inside it ("Unexpected end of
        // form"): without a listener that error would be uncaught and end the process (found by
        // the body fuzz target, fuzz/crashes/body). The form's own error answers 400 below.
        file.on('error', () => {});
        file.resume();
        return;
      }
      current = file;
      work = onFile(info.filename ?? '', file);
      // An error of the handler: the rest of the file still has to be read for busboy to finish.
      work.catch(() => file.resume());
    });
    // A body busboy cannot parse (a missing boundary, a form cut short): 400.
    bb.on('error', (err) => fail(new HttpError(400, `Invalid multipart body: ${(err as Error).message}`)));
    // The body failing (413 past the limit, a client gone away) never closes busboy.
    body.on('error', fail);
    bb.on('close', settle);
    body.pipe(bb);
  });
}

/**
 * API.md §10.7 `POST /v1/media/upload`: `multipart/form-data` with the field `file`, under its
 * own body limit (MSGSVC_MEDIA_BODY_LIMIT; 413 beyond, before a byte is read when Content-Length
 * says so). The type is read from the content (jpg, gif, bmp, png, tiff), the dimensions with
 * image-size; the bytes are written to the database as they arrive, in one transaction
 * (src/domain/media.ts). Replies 201 with the media record and `Location` to media/view. Errors,
 * on the field `file`, nothing stored: `File cannot be blank.`, `Only files with these extensions
 * are allowed: jpg, gif, bmp, png, tiff.`, `Animated GIF files are not supported.`, `The file
 * "{name}" is too big. Its size cannot exceed 70.00MB.` Another body type: 415. Honours
 * Idempotency-Key (API.md §7).
 */
export const mediaUpload = defineOperation({
  id: 'media.upload',
  path: '/v1/media/upload',
  resource: 'media',
  methods: ['POST'],
  summary: 'Upload an image for MMS',
  success: 201,
  location: '/v1/media/view',
  idempotent: true,
  body: { kind: 'multipart', limitBytes: (config) => config.mediaBodyLimitBytes },
  schema: { body: MediaUploadBodySchema, response: MediaRecordSchema },
  handler: ({ store, time, clock }) => {
    const toRecord = mediaRecord(time);
    const now = clock ?? systemClock;
    return async (ctx) => {
      const body = ctx.stream();
      const hasBody = ctx.request.body !== undefined && ctx.request.body !== null;
      if (!hasBody) throw fileError(MEDIA_MESSAGES.blank);
      if (body.mediaType !== MULTIPART) {
        body.bytes.on('error', () => {});
        body.bytes.resume();
        throw new HttpError(415, 'Unsupported Media Type: send the file as multipart/form-data with the field "file".');
      }
      const row = await withoutIdleTimeout(ctx.request.raw.socket, () =>
        readUpload<MediaRow>(body.bytes, body.contentType, (name, file) => storeUpload(store, now, ctx.accountId, name, file)),
      );
      if (row === undefined) throw fileError(MEDIA_MESSAGES.blank);
      return toRecord(row);
    };
  },
});
