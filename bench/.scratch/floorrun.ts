import autocannon from 'autocannon';
import { freePort, pinSelf, startServer, stopAll } from '../lib/procs.ts';
pinSelf(1);
for (const mode of process.argv.slice(2)) {
  const port = await freePort();
  const s = await startServer({ name: mode, nodeArgs: ['--no-memory-reducer', '--import', 'tsx'], args: ['/work/main/bench/.scratch/floor.ts', String(port), mode], cpu: 0, port, readyPath: '/v1/credits/balance' });
  const go = () => new Promise<any>((res, rej) => autocannon({ url: `${s.url}/v1/credits/balance?access_token=x`, connections: 50, duration: 3 }, (e, r) => (e ? rej(e) : res(r))));
  await go();
  const before = s.cpuMicros();
  const r = await go();
  console.log(`${mode.padEnd(14)} ${Math.round(r.requests.total / r.duration)} req/s  ${((s.cpuMicros() - before) / r.requests.total).toFixed(1)} µs CPU/req`);
  await s.stop();
}
await stopAll();
