// Scratch: CPU µs per request of msgsvc and the ceiling, per scenario (less noisy than req/s).
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, pinSelf, startServer, stopAll, type Server } from '../lib/procs.ts';
import { SCENARIOS, type Dataset } from '../scenarios.ts';
const ROOT = '/work/main';
const size = Number(process.argv[2] ?? 10000);
const only = process.argv[3]?.split(',');
const n = Number(process.argv[4] ?? 20000);
pinSelf(1);
const db = join(ROOT, 'bench/.data', `msgsvc-${size}.db`);
const data = JSON.parse(readFileSync(`${db}.json`, 'utf8')) as Dataset;
const cp = await freePort();
const ceiling = await startServer({ name: 'c', nodeArgs: ['--no-memory-reducer', '--import', 'tsx'], args: [join(ROOT, 'bench/ceiling.ts'), String(cp)], cpu: 0, port: cp, readyPath: '/' });
const p = await freePort();
const env = Object.fromEntries((process.env.MSGSVC_ENV ?? '').split(' ').filter(Boolean).map((kv) => kv.split('=') as [string, string]));
const msgsvc = await startServer({ name: 'm', nodeArgs: ['--no-memory-reducer'], args: [join(ROOT, 'bin/msgsvc.js'), 'serve', '--port', String(p), '--no-demo'], env: { DATABASE_URL: db, MSGSVC_RATE_LIMIT: '1000000000', LOG_LEVEL: 'info', ...env }, cpu: 0, port: p, readyPath: '/healthz' });
async function run(s: Server, req: any, amount: number) {
  const before = s.cpuMicros();
  const t = Date.now();
  const r = await new Promise<any>((res, rej) => autocannon({ url: s.url, connections: 50, duration: amount / 10000, requests: [req] }, (e, r) => (e ? rej(e) : res(r))));
  return { us: (s.cpuMicros() - before) / r.requests.total, rps: Math.round(r.requests.total / r.duration), codes: Object.keys(r.statusCodeStats).join(',') };
}
for (const sc of SCENARIOS) {
  if (only && !only.includes(sc.name)) continue;
  await run(ceiling, sc.request(data), 5000); await run(msgsvc, sc.request(data), 5000);
  const c = await run(ceiling, sc.request(data), n);
  const m = await run(msgsvc, sc.request(data), n);
  console.log(`${sc.name.padEnd(16)} ceiling ${c.us.toFixed(1).padStart(6)} µs/req  msgsvc ${m.us.toFixed(1).padStart(6)} µs/req  cpu-ratio ${(c.us / m.us).toFixed(2)}   rps ${c.rps}/${m.rps} codes ${m.codes}`);
}
console.log('rss', msgsvc.peakRssMiB());
await stopAll();
