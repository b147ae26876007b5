// Scratch: what a minimal server costs with msgsvc's unavoidable work added step by step.
import Fastify from 'fastify';
import Database from 'better-sqlite3';
import pino from 'pino';
const mode = process.argv[3] ?? 'bare';
const db = new Database('/work/main/bench/.data/msgsvc-10000.db');
db.pragma('journal_mode = WAL');
const st = db.prepare('select available_credits from credit_balances where account_id = ?');
const app = Fastify(mode.includes('log') || mode.includes('lgr') ? { logger: { level: 'info', stream: pino.destination(1) } as any, disableRequestLogging: true } : {});
if (mode.includes('async4')) for (let i = 0; i < 4; i++) app.addHook('onRequest', async (req) => { (req as any)['x' + i] = 1; });
if (mode.includes('cb4')) for (let i = 0; i < 4; i++) app.addHook('onRequest', (req, _r, done) => { (req as any)['x' + i] = 1; done(); });
if (mode.includes('onresp')) app.addHook('onResponse', async (req) => { (req as any).y = 1; });
app.get('/v1/credits/balance', (req, reply) => {
  let body: any = { AvailableCredits: 100 };
  if (mode.includes('db')) body = { AvailableCredits: (st.get(1) as any).available_credits };
  if (mode.includes('hdr')) {
    const r = reply.raw;
    r.setHeader('Vary', 'Accept');
    r.setHeader('X-Rate-Limit-Limit', '1000000000');
    r.setHeader('X-Rate-Limit-Remaining', '999999999');
    r.setHeader('X-Rate-Limit-Reset', '0');
    r.setHeader('X-Pagination-Total-Count', '1');
    r.setHeader('X-Pagination-Page-Count', '1');
    r.setHeader('X-Pagination-Current-Page', '1');
    r.setHeader('X-Pagination-Per-Page', '100');
    r.setHeader('Link', '<http://127.0.0.1:18081/v1/credits/balance?access_token=lDE1vh_sX8ioznzSsz_5QQHdc24AtYkm&page=1>; rel=self');
    reply.type('application/json; charset=UTF-8');
  }
  if (mode.includes('log')) req.log.info({ method: req.method, url: req.url, statusCode: 200 }, 'request');
  reply.send(body);
});
await app.listen({ port: Number(process.argv[2]), host: '127.0.0.1' });
