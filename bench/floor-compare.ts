/**
 * The floor experiment of docs/PERFORMANCE.md, in one command: the ceiling (bench/ceiling.ts), the
 * floor (bench/floor.ts) with and without its log line, and msgsvc, all on the same database and
 * pinned to CPU 0 like the bench, loaded with credits/balance in alternating rounds from CPU 1.
 * Prints each server's median CPU time per request and the ceiling's as a share of it.
 *
 *   node --import tsx bench/floor-compare.ts [--contacts 10000] [--rounds 8] [--seconds 2]
 */
import autocannon from 'autocannon';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureDataset } from './lib/data.ts';
import { freePort, machine, pinSelf, startServer, stopAll, type Server } from './lib/procs.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    contacts: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '2' },
    'data-dir': { type: 'string', default: join(ROOT, 'bench/.data') },
  },
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const m = machine();
  const cpu = m.taskset && m.nproc >= 2 ? 0 : undefined;
  if (cpu !== undefined) pinSelf(1);
  const dir = resolve(flags['data-dir']);
  mkdirSync(dir, { recursive: true });
  const data = await ensureDataset(dir, Number(flags.contacts));
  const pinned = cpu !== undefined ? { cpu } : {};
  const nodeArgs = ['--no-memory-reducer'];
  const servers: { name: string; server: Server; cpu: number[] }[] = [];
  const add = async (name: string, start: (port: number) => Promise<Server>) =>
    servers.push({ name, server: await start(await freePort()), cpu: [] });
  await add('ceiling', (port) =>
    startServer({
      name: 'ceiling',
      nodeArgs: [...nodeArgs, '--import', 'tsx'],
      args: [join(ROOT, 'bench/ceiling.ts'), String(port)],
      ...pinned,
      port,
      readyPath: '/',
    }),
  );
  for (const mode of ['db+hdr', 'db+hdr+log']) {
    await add(`floor ${mode}`, (port) =>
      startServer({
        name: mode,
        nodeArgs: [...nodeArgs, '--import', 'tsx'],
        args: [join(ROOT, 'bench/floor.ts'), String(port), data.file, mode],
        ...pinned,
        port,
        readyPath: '/v1/credits/balance',
      }),
    );
  }
  await add('msgsvc', (port) =>
    startServer({
      name: 'msgsvc',
      nodeArgs: [...nodeArgs, '--max-semi-space-size=8'],
      args: [join(ROOT, 'bin/msgsvc.js'), 'serve', '--port', String(port), '--no-demo'],
      env: { DATABASE_URL: data.file, MSGSVC_RATE_LIMIT: '1000000000' },
      ...pinned,
      port,
      readyPath: '/healthz',
    }),
  );
  const path = `/v1/credits/balance?access_token=${encodeURIComponent(data.token)}`;
  const round = async (server: Server, seconds: number) => {
    const before = server.cpuMicros();
    const total = await new Promise<number>((done, fail) =>
      autocannon({ url: server.url, connections: 50, duration: seconds, requests: [{ method: 'GET', path }] }, (err, result) =>
        err ? fail(err) : done(result.requests.total),
      ),
    );
    return (server.cpuMicros() - before) / total;
  };
  for (const s of servers) await round(s.server, 1); // warm-up
  for (let r = 0; r < Number(flags.rounds); r++) for (const s of servers) s.cpu.push(await round(s.server, Number(flags.seconds)));
  const ceiling = median(servers[0]!.cpu);
  for (const s of servers) {
    const mine = median(s.cpu);
    console.log(
      `${s.name.padEnd(18)} ${mine.toFixed(1).padStart(6)} µs CPU/request (median)  ceiling ÷ this ${(ceiling / mine).toFixed(2)}`,
    );
  }
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
