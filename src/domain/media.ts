import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileTypeFromBuffer } from 'file-type';
import { imageSize } from 'image-size';
import omggif from 'omggif';
import { inTransaction, type Store } from '../store/db.ts';
import * as media from '../store/repositories/media.ts';
import type { MediaRow } from '../records/media.ts';
import { ValidationFailedError } from './errors.ts';
import { findOr404, loadOr404 } from './find.ts';
import type { Clock } from '../lib/time.ts';
import { recheckScheduledWithoutMedia } from './mms-templates.ts';

/**
 * MMS media (API.md §10.7 `/v1/media/…`; API.md §10.7).
 *
 * An upload is stored as it arrives: the first bytes (up to HEAD_BYTES) are read to learn the type
 * from the content (`file-type`, never the name or the declared type) and the dimensions
 * (`image-size`); then, in ONE transaction, the media row is inserted and the bytes are written in
 * MEDIA_CHUNK_BYTES chunks as they come, so an upload holds about one chunk and the head in memory,
 * whatever its size. Any error (too big, an animated GIF, the body cut short, a 413) rolls the
 * transaction back: nothing is stored.
 *
 * PostgreSQL: the transaction runs on its own pool connection while the body arrives. SQLite has
 * ONE connection, and a transaction holds it: written at the client's pace, a slow 70 MB upload
 * would stop every other request of the process for as long. So on SQLite the rest of the body
 * (after the head) first goes to a private temp file as it arrives (never held in memory; the
 * size limit is checked there), and the transaction then writes it from the file at disk speed.
 *
 * An animated GIF is found by counting its frames with `omggif`, which reads a whole GIF from one
 * buffer: for a GIF (and only a GIF) the stored chunks are read back into one buffer of its size,
 * inside the transaction, once all have been written.
 */

/** 70.00MB (API.md §10.7): a larger file gives 422 (API.md §10.7). */
export const MEDIA_MAX_BYTES = 73_400_320;
/** The length of every stored chunk but a media's last. */
export const MEDIA_CHUNK_BYTES = 256 * 1024;
/** How much of the start of a file is read before anything is stored (type and dimensions). */
const HEAD_BYTES = 1024 * 1024;
/** A file whose dimensions are not in its head is read back whole for them up to this size. */
const READ_BACK_BYTES = 16 * 1024 * 1024;

/** The types API.md §10.7 allows, by file-type's extension: their record MimeType. */
const ALLOWED: Readonly<Record<string, string>> = {
  jpg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  png: 'image/png',
  tif: 'image/tiff',
};
/** Every MimeType a stored media can have: the Content-Types `media/download` sends (docs/API.md §10.7). */
export const MEDIA_MIME_TYPES: readonly string[] = Object.values(ALLOWED);

/** The exact API.md §10.7 messages, on the field `file`. */
export const MEDIA_MESSAGES = {
  type: 'Only files with these extensions are allowed: jpg, gif, bmp, png, tiff.',
  animated: 'Animated GIF files are not supported.',
  tooBig: (name: string) => `The file "${name}" is too big. Its size cannot exceed 70.00MB.`,
  blank: 'File cannot be blank.',
};

/** A 422 on the field `file` (API.md §10.7). */
export function fileError(message: string): ValidationFailedError {
  return new ValidationFailedError([{ field: 'file', message }]);
}

/** Largest FileName kept, in characters (a longer name is cut). */
const MAX_NAME = 255;

/** The name a file is stored under: its base name as sent (no directory), at most 255 characters. */
export function storedFileName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  return [...base].slice(0, MAX_NAME).join('');
}

/** Reads the first `n` bytes (or all, when shorter) of an iterator, keeping the rest of its last chunk. */
async function readHead(it: AsyncIterator<Buffer>, n: number): Promise<{ head: Buffer; done: boolean }> {
  const parts: Buffer[] = [];
  let length = 0;
  while (length < n) {
    const next = await it.next();
    if (next.done) return { head: Buffer.concat(parts), done: true };
    parts.push(next.value);
    length += next.value.length;
  }
  return { head: Buffer.concat(parts), done: false };
}

/** Width and height by image-size, or undefined when the bytes do not hold them. */
function dimensions(bytes: Uint8Array): { width: number; height: number } | undefined {
  try {
    const size = imageSize(bytes);
    if (size.width === undefined || size.height === undefined) return undefined;
    return { width: size.width, height: size.height };
  } catch {
    return undefined;
  }
}

/** True when the GIF has more than one frame (omggif); a GIF omggif cannot read is not an image we take. */
function isAnimatedGif(bytes: Buffer): boolean {
  let frames: number;
  try {
    frames = new omggif.GifReader(bytes).numFrames();
  } catch {
    throw fileError(MEDIA_MESSAGES.type);
  }
  return frames > 1;
}

/**
 * Stores one uploaded file (API.md §10.7 `media/upload`), reading `file` as it arrives.
 * @param name the file name the client sent (FileName, and the too-big message).
 * @returns the new media row.
 * @throws ValidationFailedError on `file`: `File cannot be blank.` (no bytes), the type message
 *   (not jpg, gif, bmp, png or tiff by content, or no readable dimensions), `Animated GIF files are
 *   not supported.`, `The file "{name}" is too big. Its size cannot exceed 70.00MB.`; or whatever
 *   `file` fails with (a 413, a client gone away). On any error nothing is stored, and `file` may be
 *   left partly read: the caller drains it.
 */
export async function storeUpload(
  store: Store,
  clock: Clock,
  accountId: number,
  name: string,
  file: AsyncIterable<Buffer>,
): Promise<MediaRow> {
  const it = file[Symbol.asyncIterator]();
  const { head, done } = await readHead(it, HEAD_BYTES);
  if (head.length === 0) throw fileError(MEDIA_MESSAGES.blank);
  const type = await fileTypeFromBuffer(head);
  const mimeType = type ? ALLOWED[type.ext] : undefined;
  if (mimeType === undefined) throw fileError(MEDIA_MESSAGES.type);
  const fileName = storedFileName(name);
  if (store.dialect !== 'sqlite' || done)
    return storeChunks(store, clock, accountId, { fileName, mimeType, head, rest: done ? undefined : it });
  // SQLite: spool the rest, then one short transaction (see the file's docstring).
  const dir = await mkdtemp(join(tmpdir(), 'msgsvc-media-'));
  try {
    const path = join(dir, 'upload');
    const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    try {
      let size = head.length;
      for (let next = await it.next(); !next.done; next = await it.next()) {
        size += next.value.length;
        if (size > MEDIA_MAX_BYTES) throw fileError(MEDIA_MESSAGES.tooBig(fileName));
        if (!out.write(next.value)) await once(out, 'drain');
      }
    } finally {
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    }
    const file = createReadStream(path, { highWaterMark: MEDIA_CHUNK_BYTES });
    try {
      return await storeChunks(store, clock, accountId, {
        fileName,
        mimeType,
        head,
        rest: file[Symbol.asyncIterator]() as AsyncIterator<Buffer>,
      });
    } finally {
      file.destroy();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The transaction of an upload: the row, then `head` and `rest` in MEDIA_CHUNK_BYTES chunks, then the checks that need every byte. */
async function storeChunks(
  store: Store,
  clock: Clock,
  accountId: number,
  upload: { fileName: string; mimeType: string; head: Buffer; rest: AsyncIterator<Buffer> | undefined },
): Promise<MediaRow> {
  const { fileName, mimeType, head, rest } = upload;
  return inTransaction(store, async (tx) => {
    const id = await media.insertMedia(tx, accountId, { fileName, mimeType, chunkBytes: MEDIA_CHUNK_BYTES }, clock.nowSeconds());
    let seq = 0;
    let size = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async (all: boolean) => {
      if (pendingBytes === 0) return;
      let buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      while (buf.length >= MEDIA_CHUNK_BYTES || (all && buf.length > 0)) {
        const take = Math.min(MEDIA_CHUNK_BYTES, buf.length);
        await media.insertChunk(tx, accountId, id, seq++, buf.subarray(0, take));
        buf = buf.subarray(take);
      }
      // Copy the remainder so the big buffer it came from can go.
      pending = buf.length > 0 ? [Buffer.from(buf)] : [];
      pendingBytes = buf.length;
    };
    const take = async (chunk: Buffer) => {
      size += chunk.length;
      if (size > MEDIA_MAX_BYTES) throw fileError(MEDIA_MESSAGES.tooBig(fileName));
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= MEDIA_CHUNK_BYTES) await flush(false);
    };
    await take(head);
    if (rest) for (let next = await rest.next(); !next.done; next = await rest.next()) await take(next.value);
    await flush(true);
    const readBack = async () => {
      const all = Buffer.allocUnsafe(size);
      let at = 0;
      for (let s = 0; s < seq; s++) at += (await media.readChunk(tx, accountId, id, s))!.copy(all, at);
      return all;
    };
    let dims = dimensions(head);
    if (dims === undefined && size > head.length && size <= READ_BACK_BYTES) dims = dimensions(await readBack());
    if (dims === undefined) throw fileError(MEDIA_MESSAGES.type);
    if (mimeType === 'image/gif' && isAnimatedGif(size === head.length ? head : await readBack())) throw fileError(MEDIA_MESSAGES.animated);
    await media.finishMedia(tx, accountId, id, size, dims.width, dims.height);
    return (await media.findMedia(tx, accountId, id))!;
  });
}

/** One page of the account's media by Id ascending (API.md §10.7 `index`, API.md §5). */
export async function mediaPage(
  store: Store,
  accountId: number,
): Promise<{ total: number; fetch: (limit: number, offset: number) => Promise<MediaRow[]> }> {
  return {
    total: await media.countMedia(store.db, accountId),
    fetch: (limit, offset) => media.listMedia(store.db, accountId, limit, offset),
  };
}

/**
 * One media of the account (API.md §10.7 `view`, `download`).
 * @throws NotFoundError `Object not found: {id}` (another account's included).
 */
export async function viewMedia(store: Store, accountId: number, id: string): Promise<MediaRow> {
  return loadOr404(id, (n) => (n > 2_147_483_647 ? Promise.resolve(undefined) : media.findMedia(store.db, accountId, n)));
}

/**
 * The bytes of a media from byte `start` to `end` (inclusive), chunk by chunk, each read from the
 * database when the previous one has been taken (API.md §10.7 `download`).
 */
export async function* mediaBytes(store: Store, accountId: number, row: MediaRow, start = 0, end = row.size - 1): AsyncGenerator<Buffer> {
  if (end < start) return;
  for (let seq = Math.floor(start / row.chunk_bytes); seq * row.chunk_bytes <= end; seq++) {
    const chunk = await media.readChunk(store.db, accountId, row.id, seq);
    if (!chunk) return;
    const base = seq * row.chunk_bytes;
    yield chunk.subarray(Math.max(0, start - base), Math.min(chunk.length, end - base + 1));
  }
}

/**
 * Deletes a media of the account, and removes it from every template (API.md §10.7 `delete`). A
 * template left with no medium cannot be sent: the approved scheduled MMS that name it are checked
 * again, in the same transaction (src/domain/mms-templates.ts recheckScheduledWithoutMedia).
 * @throws NotFoundError `Object not found: {id}`.
 */
export async function deleteMediaById(store: Store, clock: Clock, accountId: number, id: string): Promise<void> {
  await inTransaction(store, async (tx) => {
    const n = await findOr404(id, (n) => (n > 2_147_483_647 ? Promise.resolve(false) : media.findMedia(tx, accountId, n)));
    await media.deleteMedia(tx, accountId, n);
    await recheckScheduledWithoutMedia(tx, accountId, clock);
  });
}
