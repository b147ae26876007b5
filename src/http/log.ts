
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
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
 * The URL with every `access_token` value replaced by `***` (CONVENTIONS §9), whatever the key's
 * spelling: `access_token`, `access%5Ftoken`, `access_token[]`, `access.token`, `access[token`, and
 * in any case (`ACCESS_TOKEN`).
 */
export function maskUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const pairs = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    // Fast path: a key of plain characters is read exactly as written.
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    // Case-insensitive: `ACCESS_TOKEN=…` is not the token parameter (keys are case-sensitive, so
    // it gets a 401) but its value is still the client's secret.
    if (PLAIN_KEY.test(rawKey)) return rawKey.toLowerCase() === 'access_token' ? `${rawKey}=${MASK}` : pair;
    const key = decodeKey(eq === -1 ? pair : pair.slice(0, eq)).replace(/^ +/, '');
    const base = key.split('[')[0]!.replace(/[. ]/g, '_');
    // As src/http/query.ts reads it: without a closing `]`, `[` is part of the name (`access[token`).
    const bracket = key.indexOf('[');
    const read = (bracket > 0 && key.indexOf(']', bracket) > bracket ? key.slice(0, bracket) : key).replace(/[. []/g, '_');
    return base.toLowerCase() === 'access_token' || read.toLowerCase() === 'access_token' ? `${eq === -1 ? pair : pair.slice(0, eq)}=${MASK}` : pair;
  });
  return `${url.slice(0, q)}?${pairs.join('&')}`;
}

/**
 * Standard output, written in batches: one write(2) per 4 KiB of lines instead of one per request
 * line (a system call costs several microseconds per request on the request path). Lines reach the
 * output within 100 ms, and all of them when the process exits (pino flushes on exit); a kill -9
 * can lose at most the last 100 ms.
 */
let stdoutStream: DestinationStream | undefined;
function batchedStdout(): DestinationStream {
  if (stdoutStream) return stdoutStream; // one per process, shared by every logger
  const stream = pino.destination({ dest: 1, minLength: 4096, sync: false });
  setInterval(() => {
    try {
      stream.flush();
    } catch {
      // Nothing to flush yet, or the stream is closing.
    }
  }, 100).unref();
  return (stdoutStream = stream);
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

/** onResponse step: the one log line of a request. */
export async function logRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  request.log.info(
    {
      reqId: request.id,
      method: request.method,
      url: maskUrl(request.url),
      statusCode: reply.statusCode,
      responseTimeMs: Math.round(reply.elapsedTime * 100) / 100,
      accountId: request.accountId || undefined,
    },
    'request',
  );
}
