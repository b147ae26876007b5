/**
 * The "floor" experiment of docs/PERFORMANCE.md: the ceiling (bench/ceiling.ts) plus only what the
 * contract makes every credits/balance request do, to see what that costs before any of msgsvc's
 * own steps (auth, rate limit, negotiation, error mapping).
 *
 *   node --no-memory-reducer --import tsx bench/floor.ts PORT DB_FILE MODE
 *
 * MODE is a `+`-separated list: `db` reads the balance with a prepared statement, `hdr` sets the
 * ten exact-case headers msgsvc sends (Vary, X-Rate-Limit-*, X-Pagination-*, Link) through
 * `reply.raw.setHeader`, `log` logs one pino line per request (to standard output, like msgsvc).
 * bench/floor-compare.ts runs it against the ceiling and msgsvc, pinned like the bench.
 */
import Database from 'better-sqlite3';
import Fastify, { LogController } from 'fastify';
import pino from 'pino';

const [port, file, mode = ''] = process.argv.slice(2);
const steps = new Set(mode.split('+'));
const db = new Database(file);
db.pragma('journal_mode = WAL');
const credits = db.prepare('select available_credits from credit_balances where account_id = ?');
const app = Fastify(
  steps.has('log')
    ? {
        loggerInstance: pino({ level: 'info' }, pino.destination({ dest: 1, minLength: 4096, sync: false })),
        logController: new LogController({ disableRequestLogging: true }),
      }
    : {},
);
app.get('/v1/credits/balance', (request, reply) => {
  const balance = steps.has('db') ? (credits.get(1) as { available_credits: number }).available_credits : 100;
  if (steps.has('hdr')) {
    const raw = reply.raw;
    raw.setHeader('Vary', 'Accept');
    raw.setHeader('X-Rate-Limit-Limit', '1000000000');
    raw.setHeader('X-Rate-Limit-Remaining', '999999999');
    raw.setHeader('X-Rate-Limit-Reset', '0');
    raw.setHeader('X-Pagination-Total-Count', '1');
    raw.setHeader('X-Pagination-Page-Count', '1');
    raw.setHeader('X-Pagination-Current-Page', '1');
    raw.setHeader('X-Pagination-Per-Page', '100');
    raw.setHeader('Link', `<http://${request.host}/v1/credits/balance?access_token=x&page=1>; rel=self`);
    reply.type('application/json; charset=UTF-8');
  }
  if (steps.has('log')) request.log.info({ method: request.method, url: request.url, statusCode: 200 }, 'request');
  reply.send({ AvailableCredits: balance });
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write(`listening ${port}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void app.close().then(() => process.exit(0)));
