/**
 * compose.yaml as the container test reads it: parsed, interpolated the way the Compose
 * specification says (`${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`,
 * `${VAR:+alternative}`, `${VAR+alternative}`, `$VAR`, `$$`), and one service turned into the
 * arguments of `podman run`, for machines without a Compose implementation that can run it.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export const COMPOSE_FILE = new URL('../../compose.yaml', import.meta.url);

/** compose.yaml before interpolation (what the JSON schema describes too). */
export function readCompose(): Record<string, unknown> {
  return parse(readFileSync(COMPOSE_FILE, 'utf8')) as Record<string, unknown>;
}

const VARIABLE = /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/**
 * One string interpolated with `env`. An empty value counts as unset for the `:` forms only, as in
 * the specification.
 * @throws Error with the `?` form's message when its variable is unset (or empty, with `:?`).
 */
export function interpolate(text: string, env: Readonly<Record<string, string | undefined>>): string {
  return text.replace(VARIABLE, (_all, dollar: string | undefined, braced, op: string | undefined, arg: string | undefined, bare) => {
    if (dollar) return '$';
    const name = (braced ?? bare) as string;
    const value = env[name];
    if (!op) return value ?? '';
    const missing = op.startsWith(':') ? value === undefined || value === '' : value === undefined;
    switch (op.replace(':', '')) {
      case '-':
        return missing ? (arg ?? '') : value!;
      case '+':
        return missing ? '' : (arg ?? '');
      default:
        if (missing) throw new Error(`required variable ${name} is missing a value: ${arg ?? ''}`);
        return value!;
    }
  });
}

/** Every string of `doc` (values, not keys) interpolated with `env`. */
export function interpolateAll<T>(doc: T, env: Readonly<Record<string, string | undefined>>): T {
  if (typeof doc === 'string') return interpolate(doc, env) as T;
  if (Array.isArray(doc)) return doc.map((item: unknown) => interpolateAll(item, env)) as T;
  if (doc !== null && typeof doc === 'object') {
    return Object.fromEntries(Object.entries(doc).map(([key, value]) => [key, interpolateAll(value, env)])) as T;
  }
  return doc;
}

/** The parts of a Compose service that the test runs. */
export interface ComposeService {
  image: string;
  command?: string[];
  environment?: Record<string, string | number | boolean | null>;
  volumes?: string[];
  healthcheck?: { test?: string[]; interval?: string; timeout?: string; start_period?: string; retries?: number; disable?: boolean };
  stop_signal?: string;
  stop_grace_period?: string;
  deploy?: { replicas?: number | string };
  depends_on?: Record<string, { condition: string }>;
}

/** Compose durations as podman takes them (`10s`, `1m30s`: the same Go syntax). */
function seconds(duration: string): number {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[unit!]!;
  }
  return total;
}

/**
 * `podman run` arguments (after `run -d`) for one container of `service`: its environment, named
 * volumes (prefixed with `project`, as Compose names them), health check, stop signal and grace
 * period, image and command. The network is left to the caller: here the host's, where the
 * host's PostgreSQL and Redis stand in for the compose file's.
 */
export function podmanRunArgs(service: ComposeService, name: string, project: string): string[] {
  const args = ['--name', name];
  for (const [key, value] of Object.entries(service.environment ?? {})) args.push('-e', `${key}=${value === null ? '' : String(value)}`);
  for (const volume of service.volumes ?? []) {
    const [source, ...rest] = volume.split(':');
    const named = source !== undefined && !source.startsWith('/') && !source.startsWith('.');
    args.push('-v', [named ? `${project}_${source}` : source, ...rest].join(':'));
  }
  const health = service.healthcheck;
  if (health?.disable) args.push('--no-healthcheck');
  else if (health?.test) {
    const [kind, ...command] = health.test;
    if (kind === 'CMD') args.push('--health-cmd', JSON.stringify(command));
    else if (kind === 'CMD-SHELL') args.push('--health-cmd', command.join(' '));
    else if (kind === 'NONE') args.push('--no-healthcheck');
    if (health.interval) args.push('--health-interval', health.interval);
    if (health.timeout) args.push('--health-timeout', health.timeout);
    if (health.start_period) args.push('--health-start-period', health.start_period);
    if (health.retries !== undefined) args.push('--health-retries', String(health.retries));
  }
  if (service.stop_signal) args.push('--stop-signal', service.stop_signal);
  if (service.stop_grace_period) args.push('--stop-timeout', String(Math.ceil(seconds(service.stop_grace_period))));
  args.push(service.image, ...(service.command ?? []));
  return args;
}
