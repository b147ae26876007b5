import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mediaBytes, viewMedia } from '../../../domain/media.ts';
import type { Store } from '../../../domain/store.ts';
import type { MediaRow } from '../../../records/media.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { HttpError } from '../../wire.ts';

/**
 * One `Range: bytes=…` value against a size: the inclusive byte span, 'unsatisfiable', or
 * undefined when the header is absent, malformed or asks for several ranges (then the whole file
 * is sent, as RFC 9110 allows).
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/**
 * API.md §10.7 `GET /v1/media/download?id=`: the bytes, with their image Content-Type and
 * Content-Length, outside the JSON/XML negotiation (an Accept of neither is not refused; errors are
 * still rendered in the negotiated format, or JSON). Read from the database one chunk at a time.
 * `Range: bytes=a-b` (one range) gives 206 with Content-Range; a range past the end gives 416.
 */
export const mediaDownload = defineOperation({
  id: 'media.download',
  path: '/v1/media/download',
  resource: 'media',
  methods: ['GET'],
  summary: 'Download the bytes of a media',
  success: 200,
  produces: 'bytes',
  schema: { query: IdQuery },
  handler: ({ store }) => {
    return async (ctx) => {
      const row = await viewMedia(store, ctx.accountId, ctx.id());
      return mediaBytesReply(store, ctx.request, ctx.reply, ctx.accountId, row);
    };
  },
});

/**
 * Sets up `reply` to answer the bytes of `row` (a media of `accountId`) and returns the stream to
 * send: Content-Type the media's own, `Accept-Ranges: bytes`, Content-Length; one `Range: bytes=…`
 * (parseRange) gives 206 with Content-Range; HEAD gets the same headers and an empty stream.
 * Shared by media/download and the carriers' signed media links (docs/API.md §10.7, §14.1).
 * @throws HttpError 416 `Requested range not satisfiable.` when the range starts past the end (Content-Range then names the size).
 */
export function mediaBytesReply(store: Store, request: FastifyRequest, reply: FastifyReply, accountId: number, row: MediaRow): Readable {
  const range = parseRange(request.headers.range, row.size);
  if (range === 'unsatisfiable') throw new HttpError(416, 'Requested range not satisfiable.', { 'Content-Range': `bytes */${row.size}` });
  reply.raw.removeHeader('Content-Type');
  reply.header('Content-Type', row.mime_type);
  reply.header('Accept-Ranges', 'bytes');
  const start = range?.start ?? 0;
  const end = range?.end ?? row.size - 1;
  if (range) {
    reply.code(206);
    reply.header('Content-Range', `bytes ${start}-${end}/${row.size}`);
  }
  reply.header('Content-Length', String(end - start + 1));
  // HEAD: an empty stream keeps the Content-Length set above (Fastify's HEAD step only drains a stream).
  if (request.method === 'HEAD') return Readable.from([]);
  return Readable.from(mediaBytes(store, accountId, row, start, end), { objectMode: false });
}
