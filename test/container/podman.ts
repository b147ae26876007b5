/**
 * Podman for the container test: the command with the flags these machines need (runc, cgroupfs:
 * the default crun fails on cgroups here), run to completion with its output collected.
 * PODMAN overrides the command and its flags (e.g. `PODMAN=podman` where the defaults work).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export const PODMAN = (process.env.PODMAN ?? 'podman --runtime /usr/sbin/runc --cgroup-manager=cgroupfs').split(/\s+/).filter(Boolean);

/** The absolute path of `command` on PATH, or undefined. */
export function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const path = join(dir, command);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface RunOptions {
  /** Killed (SIGKILL) after this long; the result then has code -1. Default 120 s. */
  timeoutMs?: number;
  /** Resolve with a non-zero exit instead of throwing. */
  allowFail?: boolean;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  input?: string;
}

/**
 * Runs `command args` and collects its output.
 * @throws Error with the command, its exit code and the end of its output when it exits non-zero
 *   (unless `allowFail`).
 */
export function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const result = {
        code: code ?? -1,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
        ms: Date.now() - started,
      };
      if (result.code !== 0 && !options.allowFail) {
        const tail = (result.stderr || result.stdout).trim().split('\n').slice(-25).join('\n');
        reject(new Error(`${command} ${args.join(' ')} exited ${result.code}:\n${tail}`));
      } else resolve(result);
    });
    child.stdin.end(options.input ?? '');
  });
}

/** `podman …` with PODMAN's flags. */
export function podman(args: readonly string[], options?: RunOptions): Promise<RunResult> {
  return run(PODMAN[0]!, [...PODMAN.slice(1), ...args], options);
}
