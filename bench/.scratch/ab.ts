// Scratch: interleaved CPU-per-request comparison of server variants (median over rounds).
import autocannon from 'autocannon';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, pinSelf, startServer, stopAll, type Server } from '../lib/procs.ts';
import { SCENARIOS, type Dataset } from '../scenarios.ts';
pinSelf(1);
const [scenarioName, roundsArg, ...variants] = process.argv.slice(2);
const rounds = Number(roundsArg);
const size = Number(process.env.SIZE ?? 10000);
const db = join('/work/main/bench/.data', `msgsvc-${size}.db`);
const data = JSON.parse(readFileSync(`${db}.json`, 'utf8')) as Dataset;
const scenario = SCENARIOS.find((s) => s.name === scenarioName)!;
const servers: [string, Server][] = [];
let vi = 0;
for (const v of variants) {
  const vdb = `/tmp/abdb-${vi++}.db`;
  copyFileSync(db, vdb);
  const port = await freePort();
  if (v === 'ceiling') servers.push([v, await startServer({ name: v, nodeArgs: ['--no-memory-reducer', '--import', 'tsx'], args: ['/work/main/bench/ceiling.ts', String(port)], cpu: 0, port, readyPath: '/' })]);
  else if (v.startsWith('floor:')) servers.push([v, await startServer({ name: v, nodeArgs: ['--no-memory-reducer', '--import', 'tsx'], args: ['/work/main/bench/.scratch/floor.ts', String(port), v.slice(6)], cpu: 0, port, readyPath: '/v1/credits/balance' })]);
  else {
    const env = Object.fromEntries(v.split(' ').filter((kv) => kv.includes('=')).map((kv) => kv.split('=') as [string, string]));
    const dir = v.startsWith('dir:') ? v.slice(4).split(' ')[0]! : '/work/main';
    servers.push([v, await startServer({ name: v, nodeArgs: ['--no-memory-reducer'], args: [join(dir, 'bin/msgsvc.js'), 'serve', '--port', String(port), '--no-demo'], env: { DATABASE_URL: vdb, MSGSVC_RATE_LIMIT: '1000000000', LOG_LEVEL: 'info', ...env }, cpu: 0, port, readyPath: '/healthz' })]);
  }
}
const go = (s: Server, d: number) => new Promise<any>((res, rej) => autocannon({ url: s.url, connections: 50, duration: d, requests: [scenario.request(data)] }, (e, r) => (e ? rej(e) : res(r))));
for (const [, s] of servers) await go(s, 1);
const us: Record<string, number[]> = {};
const rps: Record<string, number[]> = {};
for (let r = 0; r < rounds; r++) {
  for (const [v, s] of servers) {
    const before = s.cpuMicros();
    const res = await go(s, 2);
    (us[v] ??= []).push((s.cpuMicros() - before) / res.requests.total);
    (rps[v] ??= []).push(res.requests.total / res.duration);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [v] of servers) console.log(`${v.padEnd(40)} ${med(us[v]!).toFixed(1).padStart(6)} µs CPU/req   ${Math.round(med(rps[v]!))} req/s   [${us[v]!.map((x) => x.toFixed(0)).join(' ')}]`);
await stopAll();
