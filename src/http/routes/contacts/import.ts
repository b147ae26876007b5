import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CLIENT_HEADER, writeClientOf } from '../../../domain/consent.ts';
import { importContacts } from '../../../domain/contacts-import.ts';
import { ImportReportSchema } from '../../../records/contacts.ts';
import { defineOperation } from '../../operation.ts';
import { HttpError } from '../../wire.ts';
import { withoutIdleTimeout } from '../../../lib/socket.ts';

/** The one body media type contacts/import reads (API.md §10.2). */
const CSV = 'text/csv';

/**
 * Writes the request body to `path` and resolves once the whole body is there.
 * @throws what the body fails with (HttpError 413 past the limit, a client gone away).
 */
async function spool(body: Readable, path: string): Promise<void> {
  await pipeline(body, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
}

/**
 * contacts/import (API.md §10.2): POST a `text/csv` body (UTF-8, a BOM ignored) under its own
 * size limit (MSGSVC_IMPORT_BODY_LIMIT, default 52,428,800 bytes; 413 beyond, before a byte is read
 * when Content-Length says so). Replies 200 `{"Created","Updated","Failed","Errors"}` in the
 * negotiated format; 422 (nothing written) for an unknown, duplicate or missing column. A
 * non-empty body of another media type gets 415; the media type is matched as API.md §3.2
 * matches JSON's (exact, lower case, before any `;`). No body at all is an empty file (422
 * `File cannot be blank.`). Honours Idempotency-Key (API.md §7). `X-Msgsvc-Client: console` marks
 * the request as the web console's (the Source of the consent ledger entries it writes).
 *
 * The body is first written to a private temp file (never held in memory), then imported from it:
 * - the upload ends at network speed, so the request timeout (MSGSVC_REQUEST_TIMEOUT_MS) bounds
 *   the upload only, never the import that follows; the socket's idle timeout is off meanwhile;
 * - a body that turns out too large (413) or a client that goes away mid-upload writes nothing.
 * The file is removed when the import ends. Disk use is at most the body limit per running import.
 */
export const contactsImport = defineOperation({
  id: 'contacts.import',
  path: '/v1/contacts/import',
  resource: 'contacts',
  methods: ['POST'],
  summary: 'Create and update contacts from a CSV file',
  success: 200,
  idempotent: true,
  body: { kind: 'csv', limitBytes: (config) => config.importBodyLimitBytes },
  schema: { response: ImportReportSchema },
  handler: ({ store, config }) => {
    return async (ctx) => {
      // The temp dir first: once ctx.stream() is called the body flows, and its errors (413) must
      // find the pipeline listening.
      const dir = await mkdtemp(join(tmpdir(), 'msgsvc-import-'));
      try {
        const body = ctx.stream();
        const hasBody = ctx.request.body !== undefined && ctx.request.body !== null;
        if (hasBody && body.contentType.split(';')[0] !== CSV) {
          body.bytes.on('error', () => {});
          body.bytes.resume();
          throw new HttpError(415, 'Unsupported Media Type: send the file as text/csv.');
        }
        const path = join(dir, 'body.csv');
        await spool(body.bytes, path);
        return await withoutIdleTimeout(ctx.request.raw.socket, async () => {
          const file = createReadStream(path);
          try {
            const source = writeClientOf(ctx.request.headers[CLIENT_HEADER]) === 'console' ? 'console' : 'import';
            return await importContacts(store, ctx.accountId, file, { region: config.defaultRegion, source });
          } finally {
            file.destroy();
          }
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };
  },
});
