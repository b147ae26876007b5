import { createServer, connect, type Server, type Socket } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A free loopback TCP port (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * A loopback TCP proxy in front of a real service (PostgreSQL, Redis), so a test can make the
 * service "go away" for the app without stopping it for everyone else: `cut()` drops every
 * connection and refuses new ones; `blackhole()` keeps every connection open but carries nothing
 * more either way, and accepts new ones that go nowhere (an address whose packets are dropped, as
 * when a container and its address vanish: no refusal, only silence); `restore()` lets new
 * connections through again.
 */
export interface TcpProxy {
  port: number;
  cut(): void;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let up = true;
  let silent = false;
  const swallow = (socket: Socket) => {
    socket.on('error', () => {});
    socket.resume();
    sockets.add(socket);
  };
  const server: Server = createServer((client) => {
    if (silent) return swallow(client);
    if (!up) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const cut = () => {
    up = false;
    silent = false;
    for (const s of sockets) s.destroy();
    sockets.clear();
    pairs.clear();
  };
  return {
    port,
    cut,
    blackhole() {
      silent = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        // What either side sends from now on is read and dropped: nothing arrives, nothing is refused.
        client.resume();
        upstream.resume();
      }
    },
    restore() {
      up = true;
      silent = false;
    },
    async close() {
      cut();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A `msgsvc serve` child process. */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout so far. */
  output(): string;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `node bin/msgsvc.js serve` on a free port with `env` added, and waits until it listens. */
export async function startServerProcess(env: Record<string, string>, timeoutMs = 20_000): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/msgsvc.js', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, MSGSVC_DEMO: '0', LOG_LEVEL: 'info', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const deadline = Date.now() + timeoutMs;
  const listening = async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
    } catch {
      return false;
    }
  };
  while (!(await listening())) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start: ${err || out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A response read off a raw socket: the head exactly as sent (header-name case included) and the body. */
export interface RawResponse {
  statusLine: string;
  status: number;
  /** Header lines in order, names as written on the wire. */
  headers: [string, string][];
  /** The value of the first header whose name is exactly `name` (case-sensitive). */
  header(name: string): string | undefined;
  body: Buffer;
}

/**
 * Sends `request` (the whole HTTP/1.1 message: request line, headers, blank line, body) as it is
 * over a new TCP connection and reads the response until the server closes the connection, so
 * nothing normalises the request target or the header names (send `Connection: close`).
 */
export async function rawHttp(port: number, request: string | Buffer, host = '127.0.0.1'): Promise<RawResponse> {
  const socket = connect(port, host);
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  await once(socket, 'connect');
  socket.write(request);
  await once(socket, 'close');
  const all = Buffer.concat(chunks);
  const end = all.indexOf('\r\n\r\n');
  const head = all
    .subarray(0, end === -1 ? all.length : end)
    .toString('latin1')
    .split('\r\n');
  const statusLine = head.shift() ?? '';
  const headers = head.map((line): [string, string] => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).trim()];
  });
  return {
    statusLine,
    status: Number(statusLine.split(' ')[1]),
    headers,
    header: (name) => headers.find(([n]) => n === name)?.[1],
    body: end === -1 ? Buffer.alloc(0) : all.subarray(end + 4),
  };
}
