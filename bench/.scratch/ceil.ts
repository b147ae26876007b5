import autocannon from 'autocannon';
import { join } from 'node:path';
import { freePort, pinSelf, startServer, stopAll } from '../lib/procs.ts';
pinSelf(1);
const cp = await freePort();
const c = await startServer({ name: 'c', nodeArgs: ['--no-memory-reducer', '--import', 'tsx'], args: [join('/work/main', 'bench/ceiling.ts'), String(cp)], cpu: 0, port: cp, readyPath: '/' });
for (const rate of [0, 40000, 20000, 10000, 5000]) {
  const before = c.cpuMicros();
  const r = await new Promise<any>((res, rej) => autocannon({ url: c.url, connections: 50, duration: 3, ...(rate ? { overallRate: rate } : {}) }, (e, r) => (e ? rej(e) : res(r))));
  console.log(`rate ${rate}: ${Math.round(r.requests.total / r.duration)} req/s, ${((c.cpuMicros() - before) / r.requests.total).toFixed(1)} µs CPU/req`);
}
await stopAll();
