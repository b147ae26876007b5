/**
 * An open-loop load generator for latency: requests are scheduled at a fixed rate over a pool of
 * keep-alive connections, whatever the server's answers do, and each latency is measured from the
 * request's scheduled time, so a stalled server is not hidden by fewer requests being sent (no
 * coordinated omission). autocannon's own rate limit sends each second's quota in a burst, which
 * measures queueing, not service latency. Raw sockets and a minimal HTTP/1.1 response reader keep
 * the client cheap enough to stay on schedule.
 */
import net from 'node:net';
import type { Request } from 'autocannon';

export interface PacedResult {
  sent: number;
  ok: number;
  unexpected: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  achievedRps: number;
}

/** One paced run: its summary and every latency it measured (ms, ascending). */
export interface PacedRun extends PacedResult {
  latenciesMs: number[];
}

/** The latency at quantile `q` of ascending `sorted` values (ms, 2 decimals); NaN when empty. */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100;
}

/**
 * Several paced runs of one server as one: percentiles over all their latencies together, counts
 * summed, the achieved rate averaged, and each run's own p99 kept for the record.
 */
export function poolPacedRuns(runs: PacedRun[]): PacedResult & { rounds: number; roundP99Ms: number[] } {
  const all = runs.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const sum = (pick: (r: PacedRun) => number) => runs.reduce((n, r) => n + pick(r), 0);
  return {
    sent: sum((r) => r.sent),
    ok: sum((r) => r.ok),
    unexpected: sum((r) => r.unexpected),
    errors: sum((r) => r.errors),
    p50Ms: quantile(all, 0.5),
    p99Ms: quantile(all, 0.99),
    maxMs: quantile(all, 1),
    achievedRps: Math.round(sum((r) => r.achievedRps) / Math.max(1, runs.length)),
    rounds: runs.length,
    roundP99Ms: runs.map((r) => r.p99Ms),
  };
}

interface Conn {
  socket: net.Socket;
  busy: boolean;
  scheduledAt: number;
  buf: Buffer;
}

function requestBytes(host: string, req: Request): Buffer {
  const body = req.body !== undefined ? Buffer.from(String(req.body)) : undefined;
  let head = `${req.method ?? 'GET'} ${req.path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n`;
  for (const [k, v] of Object.entries(req.headers ?? {})) head += `${k}: ${v}\r\n`;
  if (body) head += `Content-Length: ${body.length}\r\n`;
  head += '\r\n';
  return body ? Buffer.concat([Buffer.from(head), body]) : Buffer.from(head);
}

/** Length of a complete response at the start of `buf` (Content-Length bodies), or 0 if incomplete. */
function completeLength(buf: Buffer, head: boolean): { length: number; status: number } {
  const end = buf.indexOf('\r\n\r\n');
  if (end === -1) return { length: 0, status: 0 };
  const headText = buf.subarray(0, end).toString('latin1');
  const status = Number(headText.slice(9, 12));
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(headText);
  const bodyLength = head || !m ? 0 : Number(m[1]);
  const total = end + 4 + bodyLength;
  return buf.length >= total ? { length: total, status } : { length: 0, status: 0 };
}

/**
 * Sends `rate` requests per second for `seconds` over `connections` keep-alive connections and
 * measures each latency from the request's scheduled time.
 *
 * `spin: true` (for a load generator that has a CPU of its own) schedules with `setImmediate`
 * instead of timers: a timer fires up to ~1 ms late, and that lateness would be counted as the
 * server's latency (p50 ~1 ms for a server that answers in 0.1 ms). Spinning keeps each send
 * within a few µs of its time, at the cost of one busy CPU. Without it, timers are used.
 */
export async function pacedLoad(
  baseUrl: string,
  request: Request,
  options: { rate: number; seconds: number; connections: number; expected: number; spin?: boolean },
): Promise<PacedRun> {
  const url = new URL(baseUrl);
  const host = url.host;
  const total = Math.round(options.rate * options.seconds);
  const interval = 1000 / options.rate;
  const latencies: number[] = [];
  let ok = 0;
  let unexpected = 0;
  let errors = 0;
  let sent = 0;
  let finished = 0;
  const waiting: number[] = []; // scheduled times of requests with no free connection yet
  const conns: Conn[] = [];
  let resolveDone: () => void = () => {};
  const allDone = new Promise<void>((r) => (resolveDone = r));
  const isHead = (request.method ?? 'GET') === 'HEAD';

  const send = (c: Conn, scheduledAt: number) => {
    const req = request.setupRequest ? request.setupRequest({ ...request }, {}) : request;
    c.busy = true;
    c.scheduledAt = scheduledAt;
    sent++;
    c.socket.write(requestBytes(host, req));
  };
  const complete = (c: Conn, status: number | null) => {
    latencies.push(performance.now() - c.scheduledAt);
    if (status === null) errors++;
    else if (status === options.expected) ok++;
    else unexpected++;
    c.busy = false;
    if (++finished === total) resolveDone();
    const next = waiting.shift();
    if (next !== undefined) send(c, next);
  };

  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      const socket = net.connect({ host: url.hostname, port: Number(url.port) });
      socket.setNoDelay(true);
      await new Promise<void>((res, rej) => socket.once('connect', res).once('error', rej));
      const c: Conn = { socket, busy: false, scheduledAt: 0, buf: Buffer.alloc(0) };
      socket.on('data', (d: Buffer) => {
        c.buf = c.buf.length === 0 ? d : Buffer.concat([c.buf, d]);
        for (;;) {
          const { length, status } = completeLength(c.buf, isHead);
          if (length === 0) break;
          c.buf = c.buf.subarray(length);
          complete(c, status);
        }
      });
      socket.on('error', () => {
        if (c.busy) complete(c, null);
      });
      conns.push(c);
    }),
  );

  const start = performance.now();
  let next = 0;
  const tick = () => {
    const now = performance.now() - start;
    while (next < total && next * interval <= now) {
      const scheduledAt = start + next * interval;
      const free = conns.find((c) => !c.busy);
      if (free) send(free, scheduledAt);
      else waiting.push(scheduledAt);
      next++;
    }
    if (next >= total) return;
    if (options.spin) setImmediate(tick);
    else setTimeout(tick, Math.max(0, Math.min(2, next * interval - now)));
  };
  tick();
  const timeout = new Promise<void>((r) => setTimeout(r, options.seconds * 1000 + 10_000).unref());
  await Promise.race([allDone, timeout]);
  const elapsed = (performance.now() - start) / 1000;
  for (const c of conns) c.socket.destroy();
  latencies.sort((a, b) => a - b);
  return {
    sent,
    ok,
    unexpected,
    errors: errors + (total - finished),
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    maxMs: quantile(latencies, 1),
    achievedRps: Math.round(ok / elapsed),
    latenciesMs: latencies,
  };
}
