// Scratch: in-process cost per request through app.inject (no sockets): stable enough to compare code changes.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { SCENARIOS, type Dataset } from '../scenarios.ts';
const size = Number(process.env.SIZE ?? 10000);
const db = `/work/main/bench/.data/msgsvc-${size}.db`;
const data = JSON.parse(readFileSync(`${db}.json`, 'utf8')) as Dataset;
const config = loadConfig({ DATABASE_URL: db, MSGSVC_DEMO: '0', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', MSGSVC_RATE_LIMIT: '1000000000' });
const store = openStore(config.database);
await migrateToLatest(store);
const app = buildApp(config, { store, logDestination: pino.destination({ dest: '/dev/null', sync: true }) });
await app.ready();
const bare = Fastify();
bare.all('*', async () => ({ AvailableCredits: 100 }));
await bare.ready();
const names = process.argv.slice(2);
const n = Number(process.env.N ?? 20000);
for (const sc of SCENARIOS.filter((s) => names.length === 0 || names.includes(s.name))) {
  const req = sc.request(data);
  const opts = () => {
    const r = req.setupRequest ? req.setupRequest({ ...req }, {}) : req;
    return { method: (r.method ?? 'GET') as any, url: r.path!, headers: { host: '127.0.0.1:8080', ...(r.headers ?? {}) }, ...(r.body !== undefined ? { payload: String(r.body) } : {}) };
  };
  const time = async (target: typeof app, count: number) => {
    const t = process.hrtime.bigint();
    for (let i = 0; i < count; i++) {
      const res = await target.inject(opts());
      if (target === app && res.statusCode !== sc.status) throw new Error(`${sc.name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    }
    return Number(process.hrtime.bigint() - t) / count / 1000;
  };
  await time(app, 2000); await time(bare, 2000);
  const results: number[] = []; const base: number[] = [];
  for (let r = 0; r < 5; r++) { results.push(await time(app, n / 5)); base.push(await time(bare, n / 5)); }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[2]!;
  console.log(`${sc.name.padEnd(16)} msgsvc ${med(results).toFixed(1).padStart(6)} µs/req   bare fastify ${med(base).toFixed(1)} µs/req   extra ${(med(results) - med(base)).toFixed(1)}`);
}
await app.close(); await store.close();
