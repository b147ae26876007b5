import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { fstatSync, writeSync } from 'node:fs';
import pino, { type DestinationStream } from 'pino';

const MASK = '***';
const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

function decodeKey(rawKey: string): string {
  try {
    return decodeURIComponent(rawKey.replace(/\+/g, ' '));
  } catch {
    return rawKey;
  }
}

/**
 * The URL with every `access_token` value replaced by `***` (API.md §1.2), whatever the key's
 * spelling: `access_token`, `access%5Ftoken`, `access_token[]`, `access.token`, `access[token`, and
 * in any case (`ACCESS_TOKEN`); and the signature `s` of a carrier's media link.
 */
export function maskUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  // A carrier's media link (API.md §14.1): its signature `s` is the permission to fetch the medium.
  const mediaLink = url.startsWith('/v1/carriers/') && url.endsWith('/media', q);
  const pairs = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      // Fast path: a key of plain characters is read exactly as written.
      const rawKey = eq === -1 ? pair : pair.slice(0, eq);
      if (mediaLink && rawKey === 's') return `s=${MASK}`;
      // Case-insensitive: `ACCESS_TOKEN=…` is not the token parameter (keys are case-sensitive, so
      // it gets a 401) but its value is still the client's secret.
      if (PLAIN_KEY.test(rawKey)) return rawKey.toLowerCase() === 'access_token' ? `${rawKey}=${MASK}` : pair;
      const key = decodeKey(eq === -1 ? pair : pair.slice(0, eq)).replace(/^ +/, '');
      const base = key.split('[')[0]!.replace(/[. ]/g, '_');
      // As src/http/query.ts reads it: without a closing `]`, `[` is part of the name (`access[token`).
      const bracket = key.indexOf('[');
      const read = (bracket > 0 && key.indexOf(']', bracket) > bracket ? key.slice(0, bracket) : key).replace(/[. []/g, '_');
      return base.toLowerCase() === 'access_token' || read.toLowerCase() === 'access_token'
        ? `${eq === -1 ? pair : pair.slice(0, eq)}=${MASK}`
        : pair;
    });
  return `${url.slice(0, q)}?${pairs.join('&')}`;
}

/** Lines are written once this many bytes are pending (or at the next tick of FLUSH_MS). */
const BATCH_BYTES = 4096;
/** The longest a line waits in the buffer before it is written, in ms. */
const FLUSH_MS = 100;
/** Bytes held while the output takes none (a reader that stopped reading); lines beyond are dropped. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;
/** How long the exit may wait for an output that takes nothing right now, in ms. */
const EXIT_FLUSH_MS = 1000;

function isWouldBlock(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EBUSY';
}

/** Blocks the thread for `ms` (the process is exiting: nothing else can run anyway). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Log lines to a file descriptor in batches: one write(2) per 4 KiB of lines instead of one per
 * request line (a system call costs several microseconds on the request path). Lines reach the
 * output within FLUSH_MS, and the rest when the process exits; a kill -9 loses at most the last
 * FLUSH_MS. Stopping never depends on the output (docs/RELIABILITY.md "Log lines"):
 * - writes never block: a pipe or socket is made non-blocking (see batchedStdout), and what it
 *   cannot take now (EAGAIN) is kept and retried at the next tick, up to MAX_PENDING_BYTES;
 * - once the output is gone (EPIPE: the reader of the pipe exited; EBADF…), logging stops: lines
 *   are dropped, the server goes on;
 * - the flush at exit gives up after EXIT_FLUSH_MS, and nothing here ever throws.
 * (pino.destination, which this replaces, retried a failed write at exit forever when the reader
 * had just gone or stopped reading, so a SIGTERM never ended the process.)
 */
class BatchedWriter implements DestinationStream {
  /** Lines not handed to write(2) yet. */
  private lines: string[] = [];
  /** What a write(2) left unwritten (the output took part of it), written before `lines`. */
  private rest: Buffer | undefined;
  private pending = 0;
  /** The output is gone: everything is dropped from now on. */
  private gone = false;

  constructor(private readonly fd: number) {}

  write(line: string): void {
    if (this.gone) return;
    const bytes = Buffer.byteLength(line);
    if (this.pending + bytes > MAX_PENDING_BYTES) return;
    this.lines.push(line);
    this.pending += bytes;
    if (this.pending >= BATCH_BYTES) this.drain();
  }

  /**
   * Writes what is pending as far as the output takes it without blocking.
   * @returns true when nothing is left (or the output is gone), false when the output is full.
   */
  drain(): boolean {
    while (!this.gone && this.pending > 0) {
      const chunk = this.rest ?? Buffer.from(this.lines.join(''));
      if (!this.rest) this.lines = [];
      this.rest = chunk;
      let written: number;
      try {
        written = writeSync(this.fd, chunk);
      } catch (err) {
        if (isWouldBlock(err)) return false;
        this.gone = true;
        this.lines = [];
        this.rest = undefined;
        this.pending = 0;
        return true;
      }
      this.pending -= written;
      this.rest = written < chunk.length ? chunk.subarray(written) : undefined;
    }
    return true;
  }

  /** pino's `logger.flush(cb)`: writes what the output takes now. */
  flush(cb?: (err?: Error) => void): void {
    this.drain();
    cb?.();
  }

  /** Writes what is pending, waiting for a full output for at most `timeoutMs`; never throws. */
  flushSync(timeoutMs = EXIT_FLUSH_MS): void {
    const deadline = Date.now() + timeoutMs;
    while (!this.drain() && Date.now() < deadline) pause(10);
  }
}

/**
 * Standard output, as a BatchedWriter (one per process, shared by every logger). A pipe or socket
 * is made non-blocking first: Node's process.stdout does that when it opens one (libuv), so a
 * write never waits for a reader that stopped reading, not even at exit. Errors of
 * process.stdout itself (the first-start banner to a reader that has gone) are ignored, as the
 * log's are: they must not stop the server.
 */
let stdoutStream: BatchedWriter | undefined;
function batchedStdout(): DestinationStream {
  if (stdoutStream) return stdoutStream;
  try {
    const stat = fstatSync(1);
    if (stat.isFIFO() || stat.isSocket()) process.stdout.on('error', () => {});
  } catch {
    // No standard output at all: the writer finds out (EBADF) and drops the lines.
  }
  const stream = new BatchedWriter(1);
  setInterval(() => stream.drain(), FLUSH_MS).unref();
  process.on('exit', () => stream.flushSync());
  return (stdoutStream = stream);
}

/** The longest partial line a relay holds while waiting for its newline, in bytes; then it is written as it is. */
const MAX_RELAY_TAIL_BYTES = 1024 * 1024;

/**
 * Copies what a `serve --workers` worker writes to its standard output (a socket pair to the
 * primary, src/cluster.ts) into this process's standard output, through the same writer as this
 * process's own log lines: whole lines at a time, so that the lines of two workers never interleave
 * mid-line, and without ever blocking or pushing back on the worker (the primary always reads; a
 * stalled output is handled by the writer, as for its own lines).
 *
 * Why the workers do not simply share the primary's standard output: the non-blocking mode of a
 * pipe or socket belongs to the open file, which inherited descriptors share. Starting a child
 * makes its standard output blocking (libuv), and a Node process restores the mode it started with
 * when it exits, so every worker started or stopped would leave the shared output blocking: with a
 * reader that stopped reading, the primary's and the other workers' next write would then wait
 * forever, and SIGTERM never ended them.
 * @param out where the lines go (tests); default this process's standard output writer.
 */
export function relayLines(source: NodeJS.ReadableStream, out: DestinationStream = batchedStdout()): void {
  let tail: Buffer | undefined;
  source.on('data', (chunk: Buffer) => {
    const data = tail ? Buffer.concat([tail, chunk]) : chunk;
    const end = data.lastIndexOf(10);
    if (end < 0 && data.length < MAX_RELAY_TAIL_BYTES) {
      tail = data;
      return;
    }
    const cut = end < 0 ? data.length : end + 1;
    out.write(data.toString('utf8', 0, cut));
    tail = cut < data.length ? data.subarray(cut) : undefined;
  });
  // A worker killed mid-line leaves a partial line: it is written on a line of its own.
  source.on('end', () => {
    if (tail) out.write(`${tail.toString('utf8')}\n`);
    tail = undefined;
  });
  source.on('error', () => {});
}

/**
 * The service's pino logger: JSON lines, request URLs masked, to standard output in batches.
 * `destination` lets tests capture every line.
 */
export function createLogger(level: string, destination?: DestinationStream): FastifyBaseLogger {
  return pino(
    {
      level,
      serializers: {
        req: (req: FastifyRequest) => ({ method: req.method, url: maskUrl(req.url), remoteAddress: req.ip }),
        res: (res: FastifyReply) => ({ statusCode: res.statusCode }),
      },
    },
    destination ?? batchedStdout(),
  );
}

const { lsCacheSym, timeSym, chindingsSym, streamSym, endSym, mixinSym, hooksSym, formattersSym, nestedKeySym, messageKeySym } =
  pino.symbols;
// Not in pino's type declarations, but among its symbols.
const msgPrefixSym = (pino.symbols as unknown as Record<string, symbol>).msgPrefixSym!;
/** pino's mark of a destination that wants each line's level and object too (pino.multistream). */
const NEEDS_METADATA = Symbol.for('pino.metadata');
/** pino's number for `info`. */
const INFO = 30;

/** The parts of a pino logger the request line is built from, when it may be built here. */
interface LineParts {
  level: string;
  time: () => string;
  chindings: string;
  end: string;
  stream: DestinationStream;
}
const lineParts = new WeakMap<object, LineParts | null>();

/**
 * What the request line needs from `logger`, or null when the logger is configured in a way that
 * pino's own path must handle (a mixin, hooks, a log formatter, a message prefix, a nested key, a
 * message key other than `msg`, or a destination that wants each line's metadata). Ours never is.
 */
function partsOf(logger: object): LineParts | null {
  let parts = lineParts.get(logger);
  if (parts !== undefined) return parts;
  const l = logger as Record<symbol, unknown>;
  const hooks = l[hooksSym] as { streamWrite?: unknown; logMethod?: unknown } | undefined;
  const formatters = l[formattersSym] as { log?: unknown } | undefined;
  const stream = l[streamSym] as (DestinationStream & Record<symbol, unknown>) | undefined;
  const level = (l[lsCacheSym] as Record<number, string> | undefined)?.[INFO];
  parts =
    stream &&
    level &&
    !l[mixinSym] &&
    !hooks?.streamWrite &&
    !hooks?.logMethod &&
    !formatters?.log &&
    !l[msgPrefixSym] &&
    !l[nestedKeySym] &&
    l[messageKeySym] === 'msg' &&
    stream[NEEDS_METADATA] !== true
      ? { level, time: l[timeSym] as () => string, chindings: l[chindingsSym] as string, end: l[endSym] as string, stream }
      : null;
  lineParts.set(logger, parts);
  return parts;
}

/**
 * onResponse step: the one log line of a request (API.md §1.2: the token masked):
 * `{"level":30,"time":…,"pid":…,"hostname":…,"reqId":…,"method":…,"url":…,"statusCode":…,
 * "responseTimeMs":…,"accountId":…,"msg":"request"}`, `accountId` only once a token was accepted.
 *
 * The line is the one pino's `info` would write, byte for byte (a test compares them), built here
 * in one expression and handed to the logger's destination: pino's general path walks the object
 * key by key, which was the largest single cost of a cheap request's log line.
 */
export function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  const log = request.log as unknown as pino.Logger;
  const parts = log.isLevelEnabled('info') ? partsOf(log) : undefined;
  const url = maskUrl(request.url);
  const responseTimeMs = Math.round(reply.elapsedTime * 100) / 100;
  const accountId = request.accountId || undefined;
  if (!parts) {
    if (parts === null)
      log.info({ reqId: request.id, method: request.method, url, statusCode: reply.statusCode, responseTimeMs, accountId }, 'request');
    return;
  }
  parts.stream.write(
    `${parts.level}${parts.time()}${parts.chindings},"reqId":${JSON.stringify(request.id)},"method":${JSON.stringify(request.method)},"url":${JSON.stringify(url)},"statusCode":${reply.statusCode},"responseTimeMs":${Number.isFinite(responseTimeMs) ? responseTimeMs : 'null'}${accountId === undefined ? '' : `,"accountId":${accountId}`},"msg":"request"${parts.end}`,
  );
}
