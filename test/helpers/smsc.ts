/**
 * The Perl SMSC of the SMPP tests and bench (test/smsc/fake-smsc.pl, on Debian's libnet-smpp-perl)
 * as a child process on a loopback port, and stunnel4 in front of it for smpps://.
 * - `smppPeerMissing()`: why these tests cannot run here (Perl Net::SMPP or stunnel missing), or
 *   undefined. Elsewhere than CI the tests skip, with one line saying so; under CI=true they fail.
 * - FakeSmsc: start, send it commands (its stdin), read its JSON-lines events, kill and restart
 *   it on the same port, read its CPU time.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './net.ts';

const SCRIPT = fileURLToPath(new URL('../smsc/fake-smsc.pl', import.meta.url));

let missing: string | null | undefined = null;

/** Why the SMPP peer cannot run here (undefined: it can). Checked once per process. */
export function smppPeerMissing(): string | undefined {
  if (missing !== null) return missing;
  const perl = spawnSync('perl', ['-MNet::SMPP', '-e', '1'], { stdio: 'ignore' });
  const stunnel = spawnSync('sh', ['-c', 'command -v stunnel4 || command -v stunnel'], { encoding: 'utf8' });
  const what: string[] = [];
  if (perl.status !== 0) what.push('Perl Net::SMPP (libnet-smpp-perl)');
  if (stunnel.status !== 0 || !stunnel.stdout.trim()) what.push('stunnel4');
  missing = what.length ? `${what.join(' and ')} missing: apt-get install -y libnet-smpp-perl stunnel4` : undefined;
  return missing;
}

let announced = false;

/**
 * The `skip` option for an SMPP test: false when the peer can run; else, outside CI, the reason
 * (printed once, one line); under CI=true it throws, so the run fails.
 */
export function smppSkip(): string | false {
  const reason = smppPeerMissing();
  if (!reason) return false;
  if (process.env.CI === 'true') throw new Error(`SMPP tests cannot run under CI: ${reason}`);
  if (!announced) {
    announced = true;
    console.log(`# SMPP tests skipped: ${reason}`);
  }
  return reason;
}

/** One JSON line the SMSC printed. */
export interface SmscEvent {
  ev: string;
  [k: string]: unknown;
}

/** A submit_sm as the SMSC logged it (test/smsc/fake-smsc.pl). */
export interface SubmitEvent extends SmscEvent {
  ev: 'submit_sm';
  seq: number;
  src: string;
  dst: string;
  esm_class: number;
  data_coding: number;
  registered_delivery: number;
  udh_hex: string;
  sm_hex: string;
  status: number;
  message_id: string;
}

/** The fake SMSC as a child process. */
export class FakeSmsc {
  /** Every event printed so far, by this process and the ones it was restarted as. */
  readonly events: SmscEvent[] = [];
  private child!: ChildProcess;
  private exited!: Promise<unknown>;
  private stderr = '';
  port = 0;

  private constructor(private readonly args: string[]) {}

  /**
   * Starts the SMSC on a free loopback port (or `port`) with the given CLI options (see the
   * script's header) and waits for it to listen.
   */
  static async start(args: string[] = [], port = 0): Promise<FakeSmsc> {
    const s = new FakeSmsc(args);
    await s.spawn(port);
    return s;
  }

  private async spawn(port: number): Promise<void> {
    const child = spawn('perl', [SCRIPT, '--port', String(port), ...this.args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = once(child, 'exit');
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          this.events.push(JSON.parse(line) as SmscEvent);
        } catch {
          this.events.push({ ev: 'unparsed', line });
        }
      }
    });
    child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    const from = this.events.length;
    const listening = await this.waitFor((e) => e.ev === 'listening', 10_000, 'the SMSC to listen', from);
    this.port = listening.port as number;
  }

  /** The process id of the running SMSC (for its CPU time). */
  get pid(): number {
    return this.child.pid!;
  }

  /** What the SMSC wrote to stderr (Net::SMPP's warnings). */
  get warnings(): string {
    return this.stderr;
  }

  /** Sends one command line (see the script's header). */
  command(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  /** The submit_sm events so far. */
  submits(): SubmitEvent[] {
    return this.events.filter((e): e is SubmitEvent => e.ev === 'submit_sm');
  }

  /** Waits (polling every 10 ms, at most `ms`) for an event from index `from` on that satisfies `pred`. */
  async waitFor(pred: (e: SmscEvent) => boolean, ms: number, what: string, from = 0): Promise<SmscEvent> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.events.slice(from).find(pred);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}; stderr: ${this.stderr.slice(-500)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Kills the process (SIGKILL by default: no goodbye on the wire) and waits for its exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill(signal);
      await this.exited;
    }
  }

  /** Starts it again on the same port with the same options. */
  async restart(): Promise<void> {
    await this.kill();
    await this.spawn(this.port);
  }

  /** CPU seconds (user + system) the running SMSC has used, from /proc (Linux). */
  cpuSeconds(): number {
    const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), counted from after the command name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  }
}

/** stunnel4 terminating TLS on `port` in front of a plain SMSC port, with a fresh self-signed certificate. */
export interface Stunnel {
  port: number;
  /** The certificate (PEM), to trust as a CA. */
  ca: string;
  stop(): Promise<void>;
}

/** Starts stunnel4 on a free loopback port in front of 127.0.0.1:`target` and waits until it accepts. */
export async function startStunnel(target: number): Promise<Stunnel> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-stunnel-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const gen = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { encoding: 'utf8' },
  );
  if (gen.status !== 0) throw new Error(`openssl: ${gen.stderr}`);
  const port = await freePort();
  const conf = join(dir, 'stunnel.conf');
  writeFileSync(
    conf,
    [
      `foreground = yes`,
      `pid =`,
      `debug = 4`,
      `[smpp]`,
      `accept = 127.0.0.1:${port}`,
      `connect = 127.0.0.1:${target}`,
      `cert = ${cert}`,
      `key = ${key}`,
      '',
    ].join('\n'),
  );
  const bin = spawnSync('sh', ['-c', 'command -v stunnel4 || command -v stunnel'], { encoding: 'utf8' }).stdout.trim();
  const child = spawn(bin, [conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = once(child, 'exit');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`stunnel did not start: ${log}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    port,
    ca: readFileSync(cert, 'utf8'),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
