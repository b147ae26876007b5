/**
 * Processes of the benchmark: the servers it starts (pinned to one core where `taskset` exists),
 * their peak memory and, where the machine has performance counters, their instruction counts.
 * Every process started here is registered and stopped by `stopAll()`, also on Ctrl-C.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';

const children = new Set<ChildProcess>();

function commandWorks(cmd: string, args: string[]): string | undefined {
  try {
    return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 10_000 });
  } catch {
    return undefined;
  }
}

export interface Machine {
  nproc: number;
  cpuModel: string;
  node: string;
  platform: string;
  kernel: string;
  memoryGiB: number;
  taskset: boolean;
  perfCounters: boolean;
}

/** True when `perf stat -e instructions` counts on this machine (not "<not supported>"). */
export function perfCountersWork(): boolean {
  const r = spawnSync('perf', ['stat', '-x', ',', '-e', 'instructions', 'true'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 && /^\d+,/m.test(`${r.stdout ?? ''}${r.stderr ?? ''}`);
}

export function machine(): Machine {
  const cpuinfo = (() => {
    try {
      return readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return '';
    }
  })();
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  return {
    nproc: Number(commandWorks('nproc', [])?.trim() ?? os.availableParallelism()),
    cpuModel: model,
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    kernel: os.release(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    taskset: commandWorks('taskset', ['-p', String(process.pid)]) !== undefined,
    perfCounters: perfCountersWork(),
  };
}

/** Pins this process (all its threads) to `cpu`. */
export function pinSelf(cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface Server {
  name: string;
  pid: number;
  url: string;
  /** CPU time (user + system) the process has used so far, in microseconds (10 ms resolution). */
  cpuMicros(): number;
  /** [user, system] CPU time so far, in microseconds. */
  cpuSplit(): [number, number];
  /** Peak resident memory so far (VmHWM), in MiB. */
  peakRssMiB(): number;
  /** Current resident memory (VmRSS), in MiB. */
  rssMiB(): number;
  stop(): Promise<void>;
}

function statusField(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : NaN;
  } catch {
    return NaN;
  }
}

const CLOCK_TICKS = Number(commandWorks('getconf', ['CLK_TCK'])?.trim() || 100);

function cpuSplit(pid: number): [number, number] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [(Number(fields[11]) / CLOCK_TICKS) * 1e6, (Number(fields[12]) / CLOCK_TICKS) * 1e6];
  } catch {
    return [NaN, NaN];
  }
}

function cpuMicros(pid: number): number {
  try {
    // Fields after the command name (which is in parentheses and may hold spaces): utime is the 14th field.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
  } catch {
    return NaN;
  }
}

/** Resolves when `url` answers any HTTP status; rejects after `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode} before answering ${url}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`no answer from ${url} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Starts `node [nodeArgs] script [args]` pinned to `cpu` (when given and taskset exists),
 * waits until `readyPath` answers on `port`, and returns a handle.
 */
export async function startServer(options: {
  name: string;
  nodeArgs: string[];
  args: string[];
  env?: Record<string, string>;
  cpu?: number;
  port: number;
  readyPath: string;
  stdout?: 'ignore' | 'inherit' | number;
  cwd?: string;
  /** A command that runs node (e.g. `valgrind --tool=callgrind …`): it must exec node in the same process. */
  wrap?: string[];
  /** How long to wait for `readyPath` (default 30 s; a server under valgrind takes minutes). */
  readyTimeoutMs?: number;
}): Promise<Server> {
  const node = [...(options.wrap ?? []), process.execPath, ...options.nodeArgs, ...options.args];
  const command = options.cpu !== undefined ? 'taskset' : node[0]!;
  const args = options.cpu !== undefined ? ['-c', String(options.cpu), ...node] : node.slice(1);
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', options.stdout ?? 'ignore', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const url = `http://127.0.0.1:${options.port}`;
  try {
    await waitForHttp(`${url}${options.readyPath}`, options.readyTimeoutMs ?? 30_000, child);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  // With taskset, the pid is taskset's, which exec()s node (or the wrapper, which exec()s its tool): the same process.
  const pid = child.pid!;
  return {
    name: options.name,
    pid,
    url,
    cpuMicros: () => cpuMicros(pid),
    cpuSplit: () => cpuSplit(pid),
    peakRssMiB: () => statusField(pid, 'VmHWM'),
    rssMiB: () => statusField(pid, 'VmRSS'),
    stop: () => stopChild(child),
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Runs a child to completion, returns its stdout; stderr is passed through (progress bars). With
 * `timeoutMs`, the child and its process group are stopped after that long, and it rejects.
 */
export function runToCompletion(command: string, args: string[], env: Record<string, string> = {}, timeoutMs?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    // With a time limit the child leads its own process group, so that what it started goes too.
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: timeoutMs !== undefined,
    });
    children.add(child);
    let out = '';
    let timedOut = false;
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        /* already gone */
      }
    };
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            killGroup('SIGTERM');
            setTimeout(() => killGroup('SIGKILL'), 3000).unref();
          }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      if (code === 0) resolve(out);
      else if (timedOut) reject(new Error(`timed out after ${Math.round(timeoutMs! / 1000)} s`));
      else reject(new Error(`${command} ${args.join(' ')} exited with code ${code}`));
    });
  });
}

/**
 * Counts the instructions `pid` executes until the returned function is called (perf stat -p).
 * The returned function resolves to the count, or null when perf gave none.
 */
export function countInstructions(pid: number): () => Promise<number | null> {
  const child = spawn('perf', ['stat', '-x', ',', '-e', 'instructions', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return async () => {
    child.kill('SIGINT');
    await exited;
    children.delete(child);
    const m = /^(\d+),[^,]*,instructions/m.exec(err);
    return m ? Number(m[1]) : null;
  };
}

/** Stops every process this module started. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => stopChild(c)));
}

process.once('SIGINT', () => {
  void stopAll().finally(() => process.exit(130));
});
process.once('SIGTERM', () => {
  void stopAll().finally(() => process.exit(143));
});

/**
 * The node flags `npm start` gives msgsvc (package.json's `start` script, e.g.
 * `--max-semi-space-size=8`), so a bench runs msgsvc as production does.
 */
export function msgsvcStartFlags(root: string): string[] {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  return (/^node((?:\s+--\S+)*)\s+bin\/msgsvc\.js/.exec(scripts.start ?? '')?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
}

/** CPU seconds (user + system) `pid` has used so far, from /proc/PID/stat (NaN when it is gone). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Seconds `pid` has been runnable but waiting for a CPU (another process had it), from /proc/PID/schedstat (NaN when gone). */
export function runQueueSeconds(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    return NaN;
  }
}
