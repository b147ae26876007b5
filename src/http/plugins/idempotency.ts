import { createHash, type Hash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest, preHandlerHookHandler, preSerializationHookHandler } from 'fastify';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  findIdempotencyKey,
  forgetIdempotencyKey,
  releaseIdempotencyKey,
  type IdempotencyRow,
} from '../../domain/idempotency.ts';
import type { Store } from '../../domain/store.ts';
import { keywordReservationXml, type KeywordReservationRecord } from '../../records/keywords.ts';
import { parseParams } from '../query.ts';
import { HttpError, REASON_PHRASES, useFormat, type Format } from '../wire.ts';

/**
 * Idempotency-Key (API.md §7), for the operations that declare `idempotent: true`, on
 * POST only ("Every POST … honour an optional Idempotency-Key header"): the PUT and PATCH of an
 * operation that also answers POST ignore the header.
 *
 * preHandler (after negotiation, auth and the rate limit, so a replay is counted like any request):
 * - no header: nothing happens (no hashing, no database access);
 * - a bad header (empty, over 255 characters, anything but visible ASCII): 400;
 * - otherwise the request claims the key with an in-progress row (`response_status` null), in one
 *   INSERT … ON CONFLICT statement. The primary key (account_id, key) decides races, within one
 *   process and across instances. A request that loses the claim reads the row: in progress → 409
 *   `A request with this Idempotency-Key is still in progress.` (whatever the request); completed
 *   with another fingerprint → 409 `Idempotency-Key was used with a different request.`; completed
 *   with the same fingerprint → the stored response is replayed (status, body, `Location`, plus
 *   `Idempotent-Replayed: true`) and the handler never runs, so nothing is done twice.
 *
 * preSerialization (which also sees the error handler's payloads, 4xx and 5xx alike) records the
 * response of the request that holds the claim, before it goes out, so a client that retries as
 * soon as it has the answer gets the replay: below 500 the row is completed (a 422 is replayed like
 * a 201); 500 and above delete the row so that the client may retry with the same key. A response
 * without a payload object (204) is recorded when it has been sent.
 *
 * Rows live 24 hours, by the injected clock (`options.now`, epoch seconds). An expired row is
 * ignored and taken over by the next claim; expired rows are deleted at most once a minute per
 * process, by the expires_at index, off the request's path.
 *
 * Fingerprint: SHA-256 over the method, the route path, the query string without its
 * `access_token` parameters (the rest kept in order, as sent) and the body bytes, so the same
 * request made with another token of the account is the same request. `_format` and `fields` are
 * query parameters like any other: part of the request.
 *
 * Replay format: what is kept is the result, not the bytes. A success keeps what the handler
 * returned (handed over by the route through `handled`, before `fields=` picks from it); an error
 * keeps the error handler's payload. It is stored once, as JSON text, and a replay sends it through
 * the route's normal steps (`fields=`, the serializer of the format THIS request negotiated): a
 * record first sent as JSON replays as XML and vice versa, exactly as a first response in that
 * format would be. Bytes were rejected because they are tied to one format, and storing both forms
 * would render every keyed response twice for a replay that rarely comes (and would still need
 * the mapping below). The few operations whose handler builds a different object per format
 * (keyword/reserve: the XML form swaps element names) are listed in REPLAY_FORMS: their success
 * result is stored in its JSON form and turned into the XML form on an XML replay.
 *
 * Streamed bodies (`csv`, `multipart`: the handler reads `request.body.stream`): the body cannot
 * be hashed before the handler runs without buffering it whole. So the claim is made with a
 * provisional fingerprint and the stream is replaced by a hashing pass-through that the handler
 * reads as before; when the response is recorded, whatever the handler left unread is read
 * (and hashed) too, up to the route's body limit, and the row is completed with the final
 * fingerprint. While the row is in progress nobody compares fingerprints (the answer is the
 * in-progress 409 whatever the request), so the provisional value is never used. A request that
 * finds a completed row reads and hashes its whole body first (413 past the limit), then replays or
 * answers 409. A body that could not be read to its end (over the limit, or the client went away)
 * has no fingerprint, and its response is not kept.
 *
 * A process that dies while it holds a claim leaves the in-progress row behind. It is never taken
 * over before it expires: the first request may have committed its work before the process died,
 * and running it again would do it twice. The key keeps answering the in-progress 409 until the
 * row expires (24 hours); the client reads the state back or uses a new key. The same holds when
 * the database refuses to record the response (it is retried twice in the background first).
 */
export interface IdempotencyHooks {
  preHandler: preHandlerHookHandler;
  preSerialization: preSerializationHookHandler<unknown>;
  /**
   * Hands over what the operation's handler returned, before any presentation step (`fields=`)
   * touches it: the success payload that is kept (API.md §7). The route calls it for every
   * idempotent operation; it does nothing for a request that holds no claim.
   */
  handled(request: FastifyRequest, result: unknown): void;
}

/** Settings of the Idempotency-Key hooks; the defaults are API.md §7's. */
export interface IdempotencyOptions {
  /** How long a key is kept, in seconds (default 24 hours). */
  ttlSeconds?: number;
  /** The clock every expiry is read from, in epoch seconds (default: the system clock). */
  now?: () => number;
}

/** How long a key is kept: 24 hours (API.md §7). */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

// 1 to 255 visible ASCII characters (API.md §7).
const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The Idempotency-Key header's value, or undefined when absent (API.md §7).
 * @throws HttpError 400 when present but not 1 to 255 visible ASCII characters (an empty value included).
 */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!KEY.test(value)) throw new HttpError(400, 'Invalid Idempotency-Key header: use 1 to 255 visible ASCII characters.');
  return value;
}

/** The 409 message while the first request with the key still runs (API.md §7). */
export const IN_PROGRESS_MESSAGE = 'A request with this Idempotency-Key is still in progress.';
/** The 409 message for the key reused with another request (API.md §7). */
export const DIFFERENT_REQUEST_MESSAGE = 'Idempotency-Key was used with a different request.';

/**
 * The query string without its `access_token` parameters (however spelled: `access%5Ftoken` too),
 * the rest as sent and in order: the query part of the request's fingerprint (API.md §7).
 */
export function queryWithoutToken(rawQuery: string): string {
  if (rawQuery === '') return '';
  return rawQuery
    .split('&')
    .filter((part) => part === '' || !parseParams(part).has('access_token'))
    .join('&');
}

/** A SHA-256 that has taken the method, path and query (less access_token): the body comes next. */
function fingerprintHead(method: string, path: string, rawQuery: string): Hash {
  // None of the three can hold a line feed (the HTTP parser refuses one), so the fields cannot run together.
  return createHash('sha256').update(`${method}\n${path}\n${queryWithoutToken(rawQuery)}\n`);
}

/**
 * The fingerprint of a request (API.md §7): SHA-256, in hex, over the method, the path,
 * the query string less every `access_token` parameter, and the body bytes.
 */
export function requestFingerprint(method: string, path: string, rawQuery: string, body: Buffer | string = ''): string {
  return fingerprintHead(method, path, rawQuery).update(body).digest('hex');
}

/** A success payload whose handler builds a different object per format: its JSON form and back. */
interface ReplayForm {
  /** The JSON form of a payload the handler built for `format`. */
  toJson(payload: unknown, format: Format): unknown;
  /** The payload for `format` from the JSON form. */
  fromJson(payload: unknown, format: Format): unknown;
}

type KeywordXml = ReturnType<typeof keywordReservationXml>;

/** Operations (by id) whose success payload differs by format; see the file's docstring. */
const REPLAY_FORMS: Readonly<Record<string, ReplayForm>> = {
  'keyword.reserve': {
    toJson: (payload, format) =>
      format === 'xml'
        ? (payload as KeywordXml[]).map((r): KeywordReservationRecord => ({
            Id: r.Id,
            Keyword: r.Number,
            Number: r.ShortCode,
            AutoreplyMessage: r.AutoreplyMessage,
          }))
        : payload,
    fromJson: (payload, format) => (format === 'xml' ? (payload as KeywordReservationRecord[]).map(keywordReservationXml) : payload),
  },
};

interface StreamedBody {
  mediaType: string;
  contentType: string;
  stream: Readable;
}

function isStreamed(body: unknown): body is StreamedBody {
  return typeof (body as StreamedBody | undefined)?.stream?.pipe === 'function';
}

/**
 * The hashing pass-through put in front of a streamed body: the handler reads it as it read the
 * original. `fingerprint()` reads what the handler left unread (up to `limit` bytes in all) and
 * resolves to the final fingerprint, or undefined when the body could not be read to its end.
 */
class HashingBody {
  readonly stream: Transform;
  private result: Promise<string | undefined>;
  private seen = 0;
  constructor(
    source: Readable,
    hash: Hash,
    private readonly limit: number,
  ) {
    let digest: string | undefined;
    this.stream = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        this.seen += chunk.length;
        hash.update(chunk);
        callback(null, chunk);
      },
      flush: (callback) => {
        digest = hash.digest('hex');
        callback();
      },
    });
    this.result = new Promise((resolve) => {
      this.stream.once('end', () => resolve(digest));
      this.stream.once('error', () => resolve(undefined));
      this.stream.once('close', () => resolve(digest));
    });
    source.once('error', (err) => this.stream.destroy(err));
    // A client that goes away mid-body: the body has no end, hence no fingerprint.
    source.once('close', () => {
      if (!source.readableEnded) this.stream.destroy(new Error('request aborted'));
    });
    source.pipe(this.stream);
  }
  fingerprint(): Promise<string | undefined> {
    if (!this.stream.readableEnded && !this.stream.destroyed) {
      // Whatever the handler did not read still counts: read it through the hash, discarding it.
      this.stream.unpipe();
      this.stream.on('data', () => {
        if (this.seen > this.limit) this.stream.destroy(new Error('over the body limit'));
      });
      this.stream.resume();
    }
    return this.result;
  }
}

/** Reads a whole streamed body through `hash`; the fingerprint. @throws HttpError 413 past `limit`. */
function hashWhole(source: Readable, hash: Hash, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen <= limit) return void hash.update(chunk);
      // Past the limit: the rest is discarded unread, as the body parser does for a declared size.
      source.off('data', onData);
      reject(new HttpError(413, `Request Entity Too Large: the body is over the limit of ${limit} bytes.`));
    };
    source.on('data', onData);
    source.once('end', () => resolve(hash.digest('hex')));
    source.once('error', reject);
    source.once('close', () => {
      if (!source.readableEnded) reject(new Error('request aborted'));
    });
  });
}

/** The claim a request holds on its key. */
interface Claim {
  /** Whose key it is (ownerOf). */
  owner: number;
  key: string;
  /** The fingerprint, known up front for collected bodies. */
  fingerprint: string | undefined;
  /** The hashing pass-through of a streamed body. */
  body: HashingBody | undefined;
  state: 'running' | 'kept' | 'released';
  /** What the handler returned (see IdempotencyHooks.handled); absent when it threw. */
  result?: { value: unknown };
}

const claims = new WeakMap<FastifyRequest, Claim>();

/**
 * Whose keys a request's key is among (API.md §7, §16.4): its account's (the account's id), or on
 * `/admin/v1` its operator key's (the negative of the key's id); 0 when neither is known.
 */
function ownerOf(request: FastifyRequest): number {
  if (request.accountId > 0) return request.accountId;
  const operatorId = request.principal?.operatorId;
  return operatorId !== undefined && operatorId > 0 ? -operatorId : 0;
}

/** What a request with a key gets from the store: the claim, a replay, or one of the two 409s. */
type Outcome = { kind: 'claimed' } | { kind: 'replay'; row: IdempotencyRow } | { kind: 'conflict'; message: string };

/**
 * Sends the API.md §4 409 in the negotiated format, its `name` the reason phrase `Conflict`
 * (Yii2's httpStatuses; wire.ts's REASON_PHRASES has no 409 entry, hence sent here).
 */
function sendConflict(request: FastifyRequest, reply: FastifyReply, message: string): void {
  useFormat(reply, request.format);
  reply.raw.statusMessage = 'Conflict';
  reply.code(409).send({ name: 'Conflict', message, code: 0, status: 409 });
}

/**
 * Builds the Idempotency-Key hooks over the store (API.md §7): the route of every
 * operation with `idempotent: true` runs `preHandler` and `preSerialization`, and hands its
 * handler's result to `handled`. `options.now` is the clock every expiry is read from.
 */
export function createIdempotency(store: Store, options: IdempotencyOptions = {}): IdempotencyHooks {
  const ttl = options.ttlSeconds ?? IDEMPOTENCY_TTL_SECONDS;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  let lastPurge = Number.NEGATIVE_INFINITY;

  /** Runs a write; on failure, logs and tries twice more in the background (1 s, then 10 s later). */
  async function persist(request: FastifyRequest, what: string, write: () => Promise<unknown>): Promise<void> {
    const attempt = async (retriesLeft: number[]): Promise<void> => {
      try {
        await write();
      } catch (err) {
        request.log.warn(
          { reqId: request.id, err: { message: (err as Error).message, code: (err as { code?: unknown }).code } },
          `idempotency: could not ${what}`,
        );
        const [delay, ...rest] = retriesLeft;
        if (delay !== undefined) setTimeout(() => void attempt(rest), delay).unref();
      }
    };
    await attempt([1000, 10_000]);
  }

  function purgeExpired(request: FastifyRequest, at: number): void {
    if (at - lastPurge < 60) return;
    lastPurge = at;
    deleteExpiredIdempotencyKeys(store, at).catch((err: unknown) =>
      request.log.warn({ reqId: request.id, err: { message: (err as Error).message } }, 'idempotency: could not delete expired keys'),
    );
  }

  function replay(request: FastifyRequest, reply: FastifyReply, row: IdempotencyRow): void {
    const status = row.response_status!;
    reply.code(status);
    if (status === 422) reply.raw.statusMessage = 'Data Validation Failed.';
    else if (status >= 400 && REASON_PHRASES[status]) reply.raw.statusMessage = REASON_PHRASES[status];
    if (row.response_location !== null) reply.raw.setHeader('Location', row.response_location);
    reply.raw.setHeader('Idempotent-Replayed', 'true');
    if (row.response_body === null) {
      reply.send();
      return;
    }
    let payload: unknown = JSON.parse(row.response_body);
    const form = status < 300 ? REPLAY_FORMS[request.routeOptions.config.operation?.id ?? ''] : undefined;
    if (form) payload = form.fromJson(payload, request.format);
    reply.send(payload);
  }

  /** Claims the key, or reads what holds it. */
  async function begin(request: FastifyRequest, reply: FastifyReply, owner: number, key: string): Promise<Outcome> {
    const path = request.routeOptions.url ?? request.url.split('?')[0]!;
    const body = request.body;
    const streamed = isStreamed(body);
    const head = () => fingerprintHead(request.method, path, request.rawQuery);
    let fingerprint: string | undefined = streamed
      ? undefined
      : head()
          .update((body as { raw?: Buffer } | undefined)?.raw ?? '')
          .digest('hex');
    const limit = request.routeOptions.bodyLimit ?? Number.MAX_SAFE_INTEGER;
    for (let attempt = 0; attempt < 3; attempt++) {
      const at = now();
      // A streamed body's row holds a provisional fingerprint until the response is recorded.
      if (await claimIdempotencyKey(store, owner, key, fingerprint ?? 'pending', at, at + ttl)) {
        const claim: Claim = { owner, key, fingerprint, body: undefined, state: 'running' };
        if (streamed) {
          claim.body = new HashingBody(body.stream, head(), limit);
          body.stream = claim.body.stream;
        }
        claims.set(request, claim);
        // A response with no payload object (204) never reaches preSerialization.
        reply.raw.once('finish', () => {
          if (claim.state === 'running') void settle(request, reply, claim, undefined);
        });
        purgeExpired(request, at);
        return { kind: 'claimed' };
      }
      const row = await findIdempotencyKey(store, owner, key);
      // Gone (a 5xx released it) or expired since the claim failed: claim again.
      if (!row || row.expires_at <= at) continue;
      // In progress: whatever this request is, the first one may still be doing its work.
      if (row.response_status === null) return { kind: 'conflict', message: IN_PROGRESS_MESSAGE };
      if (streamed) fingerprint = await hashWhole(body.stream, head(), limit);
      if (row.fingerprint !== fingerprint) return { kind: 'conflict', message: DIFFERENT_REQUEST_MESSAGE };
      return { kind: 'replay', row };
    }
    // The key changed hands three times while we looked: someone is using it right now.
    return { kind: 'conflict', message: IN_PROGRESS_MESSAGE };
  }

  /** Records the response of the request that holds the claim (kept below 500, released otherwise). */
  async function settle(request: FastifyRequest, reply: FastifyReply, claim: Claim, payload: unknown): Promise<void> {
    const status = reply.statusCode;
    if (status >= 500) {
      claim.state = 'released';
      return persist(request, 'release the key', () => releaseIdempotencyKey(store, claim.owner, claim.key));
    }
    claim.state = 'kept';
    const fingerprint = claim.fingerprint ?? (await claim.body?.fingerprint());
    if (fingerprint === undefined) {
      claim.state = 'released';
      return persist(request, 'release the key', () => releaseIdempotencyKey(store, claim.owner, claim.key));
    }
    // A success keeps what the handler returned, before `fields=` picked from it; an error keeps
    // the error handler's payload (no presentation step touches errors).
    let stored = status === 204 ? undefined : status < 300 && claim.result ? claim.result.value : payload;
    const form = status < 300 ? REPLAY_FORMS[request.routeOptions.config.operation?.id ?? ''] : undefined;
    if (form && stored !== undefined) stored = form.toJson(stored, request.format);
    const location = reply.raw.getHeader('Location');
    const response = {
      fingerprint,
      status,
      body: stored === undefined || stored === null ? null : JSON.stringify(stored),
      location: location === undefined ? null : String(location),
    };
    return persist(request, 'record the response', () => completeIdempotencyKey(store, claim.owner, claim.key, response));
  }

  return {
    preHandler(request, reply, done) {
      const header = request.headers['idempotency-key'];
      // Only a POST honours the header (API.md §7): the PUT and PATCH of an operation that
      // also answers POST ignore it, as every other method does.
      if (header === undefined || request.method !== 'POST') return done();
      const owner = ownerOf(request);
      if (owner === 0) return done();
      let key: string;
      try {
        key = idempotencyKeyOf(header)!;
      } catch (err) {
        return done(err as Error);
      }
      begin(request, reply, owner, key).then(
        (outcome) => {
          if (outcome.kind === 'claimed') done();
          else if (outcome.kind === 'replay') replay(request, reply, outcome.row);
          else sendConflict(request, reply, outcome.message);
        },
        (err: unknown) => done(err as Error),
      );
    },
    handled(request, result) {
      const claim = claims.get(request);
      if (claim?.state === 'running') claim.result = { value: result };
    },
    preSerialization(request, reply, payload, done) {
      const claim = claims.get(request);
      if (claim === undefined || claim.state === 'released') return done(null, payload);
      // A kept response whose serialisation then failed goes out as a 500: not kept after all.
      const settled =
        claim.state === 'running'
          ? settle(request, reply, claim, payload)
          : reply.statusCode >= 500
            ? ((claim.state = 'released'), persist(request, 'release the key', () => forgetIdempotencyKey(store, claim.owner, claim.key)))
            : Promise.resolve();
      settled.then(
        () => done(null, payload),
        () => done(null, payload),
      );
    },
  };
}
