/**
 * The container image (Dockerfile) and compose.yaml, built and run with Podman
 * (`npm run test:container`, scripts/container-test.sh; not part of `npm test`: its name does not
 * match test/**\/*.test.ts).
 *
 * - compose.yaml is valid against the Compose specification's JSON schema (test/fixtures/compose-spec.json),
 *   before and after interpolation, requires POSTGRES_PASSWORD, and passes every setting of
 *   src/config.ts from the environment; the health checks it declares for PostgreSQL and Redis
 *   answer against the host's.
 * - The image is built from a local base image (test/container/base-image.sh: Debian bookworm and
 *   this machine's Node 20), since no image registry is reachable here; MSGSVC_CONTAINER_BASE_IMAGE
 *   names another (e.g. node:20-bookworm-slim where a registry is reachable). It runs as a non-root
 *   user and holds no development dependency and no test file.
 * - Run on SQLite with a volume; as compose.yaml's `msgsvc` and `worker` services over the host's
 *   PostgreSQL and Redis (--network host); and as the whole of compose.yaml under podman-compose,
 *   with two worker replicas and stand-ins for the postgres and redis images
 *   (test/container/standins/). Each time the health checks pass, a message sent through the
 *   sandbox carrier over HTTP ends Delivered (docs/API.md §10.6, §11.3), and SIGTERM stops the
 *   containers with exit code 0 within 10 s.
 *
 * Diagnostics: the image's size, the build time, the times from `podman run` to /readyz and to
 * healthy. Without podman (or podman-compose) the cases that need it skip in one line, except
 * under CI=true, where they fail.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { SETTINGS } from '../../src/config.ts';
import { createTestDatabase, dropTestDatabases, REDIS_TEST_URL, redisSkip, STORES } from '../helpers/stores.ts';
import { freePort } from '../helpers/net.ts';
import { until } from '../helpers/wait.ts';
import { COMPOSE_FILE, interpolateAll, podmanRunArgs, readCompose, type ComposeService } from './compose.ts';
import { PODMAN, podman, run, which } from './podman.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CI = process.env.CI === 'true';
const IMAGE = process.env.MSGSVC_CONTAINER_IMAGE ?? 'localhost/msgsvc:test';
const LOCAL_BASE = 'localhost/msgsvc-base:test';
const BASE_IMAGE = process.env.MSGSVC_CONTAINER_BASE_IMAGE ?? LOCAL_BASE;
/** Names of this run's containers and volumes. */
const RUN_ID = `msgsvc-ctest-${process.pid}`;
const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const LOCK = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { dev?: boolean }>;
};
/** Packages needed to build dist/ only, which the image leaves out although they are `dependencies`. */
const BUILD_ONLY = ['typescript', 'tsx', 'esbuild', 'vite'];
/** Settings of src/config.ts that compose.yaml does not pass, and why. */
const NOT_IN_COMPOSE: Record<string, string> = {
  MSGSVC_FROM_SOURCE: 'development only: the image has no sources',
  MSGSVC_CLUSTER_WORKER: 'internal to serve --workers',
  NODE_EXTRA_CA_CERTS: 'useless without a mounted PEM file: an override file sets both',
};

function podmanSkip(): string | false {
  if (which('podman')) {
    if (BASE_IMAGE === LOCAL_BASE && process.getuid?.() !== 0 && !CI) return 'not root: the local base image needs debootstrap as root';
    return false;
  }
  if (CI) return false; // runs, and fails at its first podman command
  return 'podman not installed (apt-get install podman runc debootstrap; scripts/container-test.sh sets it up)';
}
const SKIP = podmanSkip();

// ---------------------------------------------------------------- compose.yaml, without containers

/** The environment the compose file is interpolated with in the tests (the required secret set). */
const COMPOSE_ENV = { POSTGRES_PASSWORD: 'a-password-for-the-test' };

describe('compose.yaml', () => {
  const raw = readCompose();
  const schema = JSON.parse(readFileSync(new URL('../fixtures/compose-spec.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  // The schema names draft-07 by an https address Ajv does not know; its keywords are draft-07's.
  delete schema.$schema;
  const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);

  test('is valid against the Compose specification JSON schema, before and after interpolation', () => {
    assert.ok(validate(raw), JSON.stringify(validate.errors, null, 2));
    const interpolated = interpolateAll(raw, COMPOSE_ENV);
    assert.ok(validate(interpolated), JSON.stringify(validate.errors, null, 2));
    // The check has teeth: a misspelt key is refused.
    const broken = structuredClone(raw) as { services: { msgsvc: { healthcheck: Record<string, unknown> } } };
    broken.services.msgsvc.healthcheck.intervall = '1s';
    assert.equal(validate(broken), false);
  });

  test('requires POSTGRES_PASSWORD and takes every operator setting from the environment', () => {
    assert.throws(() => interpolateAll(raw, {}), /required variable POSTGRES_PASSWORD/);
    const compose = interpolateAll(raw, COMPOSE_ENV) as { services: Record<string, ComposeService>; volumes: Record<string, unknown> };
    const { msgsvc, worker, postgres, redis } = compose.services;
    assert.ok(msgsvc && worker && postgres && redis, 'services msgsvc, worker, postgres, redis');
    const rawEnv = (raw as { services: Record<string, ComposeService> }).services.msgsvc!.environment!;
    const missing = SETTINGS.map((s) => s.name).filter((name) => !(name in NOT_IN_COMPOSE) && !(name in rawEnv));
    assert.deepEqual(missing, [], 'settings of src/config.ts that compose.yaml does not pass');
    for (const [name, value] of Object.entries(rawEnv)) {
      if (name === 'DATABASE_URL') continue; // built from POSTGRES_* below
      // `${NAME:-default}`, or no value (passed on when set, else unset). Never an empty default:
      // podman-compose 1.0 leaves `${NAME:-}` in the value as it is.
      if (value !== null) assert.match(String(value), /^\$\{[A-Z_]+:-[^}]+\}$/, `${name} comes from the environment with a default`);
    }
    assert.doesNotMatch(readFileSync(COMPOSE_FILE, 'utf8'), /:-\}/, 'no empty default anywhere');
    assert.deepEqual(worker.environment, msgsvc.environment, 'both instances get the same settings');
    assert.equal(msgsvc.environment!.DATABASE_URL, 'postgres://msgsvc:a-password-for-the-test@postgres:5432/msgsvc');
    assert.equal(msgsvc.environment!.REDIS_URL, 'redis://redis:6379');
    assert.equal(msgsvc.environment!.HOST, '0.0.0.0');
    assert.deepEqual(msgsvc.command, ['serve']);
    assert.deepEqual(worker.command, ['worker']);
    assert.equal(String(worker.deploy?.replicas), '1');
    assert.equal(worker.healthcheck, undefined, "the worker keeps the image's health check");
    for (const service of [msgsvc, worker]) {
      assert.deepEqual(service.depends_on, { postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
    }
    for (const service of [msgsvc, postgres, redis]) assert.ok(service.healthcheck?.test, 'a health check');
    assert.deepEqual(msgsvc.healthcheck!.test, ['CMD', 'node', '/app/healthcheck.cjs'], "the image's own probe of /readyz");
    assert.deepEqual(Object.keys(compose.volumes).sort(), ['msgsvc-data', 'postgres-data']);
  });

  test('podman-compose (a Compose implementation) turns it into podman commands with every variable resolved', async (t) => {
    if (!which('podman-compose')) {
      if (CI) assert.fail('CI=true: podman-compose is required (apt-get install podman-compose)');
      t.skip('podman-compose not installed (apt-get install podman-compose)');
      return;
    }
    // --dry-run prints the `podman run` of each service without running it; it still creates the
    // project's volumes and network, removed below. MSGSVC_IMAGE names an image that exists, or none:
    // either way nothing is built.
    const project = `${RUN_ID}-dry`;
    const env = { ...process.env, ...COMPOSE_ENV, MSGSVC_IMAGE: IMAGE, MSGSVC_CARRIERS: 'main=sandbox:' };
    try {
      const { stdout, stderr } = await run('podman-compose', ['--dry-run', '-p', project, '-f', fileURLToPath(COMPOSE_FILE), 'up', '-d'], {
        env,
        cwd: ROOT,
      });
      const runs = `${stdout}\n${stderr}`.split('\n').filter((line) => line.startsWith('podman run '));
      const services = runs.map((line) => /--label com\.docker\.compose\.service=(\S+)/.exec(line)?.[1]).sort();
      assert.deepEqual(services, ['msgsvc', 'postgres', 'redis', 'worker']);
      for (const line of runs) assert.doesNotMatch(line, /\$\{/, 'a variable left unresolved');
      const msgsvc = runs.find((line) => line.includes('compose.service=msgsvc'))!;
      assert.match(msgsvc, / -e MSGSVC_CARRIERS /, 'an optional setting is passed on by name');
      assert.match(msgsvc, /-e DATABASE_URL=postgres:\/\/msgsvc:a-password-for-the-test@postgres:5432\/msgsvc /);
      assert.match(msgsvc, /--healthcheck-command \/bin\/sh -c node' '\/app\/healthcheck\.cjs /);
    } finally {
      for (const volume of ['msgsvc-data', 'postgres-data'])
        await podman(['volume', 'rm', '-f', `${project}_${volume}`], { allowFail: true });
      await podman(['network', 'rm', '-f', `${project}_default`], { allowFail: true });
    }
  });

  test("its PostgreSQL and Redis health checks answer against the host's", async (t) => {
    const pgSkip = STORES.find((s) => s.kind === 'postgres')!.skip;
    const rSkip = await redisSkip();
    if (pgSkip || rSkip || !which('pg_isready') || !which('redis-cli')) {
      t.skip(String(pgSkip || rSkip || 'pg_isready or redis-cli not installed'));
      return;
    }
    const pg = new URL(process.env.MSGSVC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    const env = { ...COMPOSE_ENV, POSTGRES_USER: decodeURIComponent(pg.username), POSTGRES_DB: pg.pathname.slice(1) };
    const { postgres, redis } = (interpolateAll(readCompose(), env) as { services: Record<string, ComposeService> }).services;
    const [, pgCommand, ...pgArgs] = postgres!.healthcheck!.test!;
    await run(pgCommand!, [...pgArgs, '-p', pg.port || '5432']);
    const redisUrl = new URL(REDIS_TEST_URL);
    const [, redisCommand, ...redisArgs] = redis!.healthcheck!.test!;
    const pong = await run(redisCommand!, ['-h', redisUrl.hostname, '-p', redisUrl.port || '6379', ...redisArgs]);
    assert.equal(pong.stdout.trim(), 'PONG');
  });
});

// ---------------------------------------------------------------- the image, built and run

/** Everything a test started, removed at the end. */
const containers = new Set<string>();
const volumes = new Set<string>();

/** The parts of `podman image inspect` and `podman container inspect` the test reads. */
interface Inspected {
  Size: number;
  State: { Running: boolean; ExitCode: number };
  Healthcheck?: { Test: string[] };
  Config: {
    User: string;
    Env: string[];
    Volumes?: Record<string, unknown>;
    Entrypoint: string[];
    Cmd: string[];
    Healthcheck?: { Test: string[] };
  };
}

async function inspect(what: 'image' | 'container', name: string): Promise<Inspected> {
  const { stdout } = await podman([what, 'inspect', name]);
  return (JSON.parse(stdout) as Inspected[])[0]!;
}

/** Polls `podman healthcheck run` (no systemd timer runs it here) until the container is healthy. */
async function waitHealthy(name: string, timeoutMs = 90_000): Promise<void> {
  await until(
    `${name} healthy`,
    async () => {
      const { code } = await podman(['healthcheck', 'run', name], { allowFail: true, timeoutMs: 15_000 });
      if (code === 0) return true;
      const state = await inspect('container', name);
      if (!state.State.Running) throw new Error(`${name} exited (${state.State.ExitCode}) before it was healthy`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      return undefined;
    },
    timeoutMs,
  );
}

/** Polls GET /readyz on the host's `port` every 100 ms until it answers 200; returns when it did. */
async function untilReady(port: number, timeoutMs = 90_000): Promise<number> {
  return until(
    `/readyz on port ${port}`,
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      if (res?.status === 200) return Date.now();
      await new Promise((resolve) => setTimeout(resolve, 100));
      return undefined;
    },
    timeoutMs,
  );
}

async function exec(name: string, args: string[]): Promise<string> {
  return (await podman(['exec', name, ...args])).stdout;
}

/** An account with a token, credits and a number, made by the msgsvc command inside the container. */
async function createAccount(name: string): Promise<{ id: number; token: string }> {
  const account = JSON.parse(await exec(name, ['msgsvc', 'accounts', 'create', '--name', 'Container test'])) as { id: number };
  const token = (await exec(name, ['msgsvc', 'tokens', 'create', '--account', String(account.id)])).trim();
  assert.match(token, /^\S{20,}$/);
  await exec(name, ['msgsvc', 'credits', 'set', '--account', String(account.id), '--amount', '100']);
  await exec(name, ['msgsvc', 'numbers', 'add', '--account', String(account.id), '--number', '55155']);
  return { id: account.id, token };
}

/** A Message record (docs/API.md §9.11), as far as the test reads it. */
interface Message {
  Id: number;
  Status_Id: number;
  Status_Description: string;
}

/** Sends one SMS through the sandbox carrier over HTTP and polls sms/view until it is Delivered. */
async function sendUntilDelivered(port: number, token: string): Promise<Message> {
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  const res = await fetch(`http://127.0.0.1:${port}/v1/sms/send`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ MobilePhone: '+15551234567', Message: 'Hello from the container' }),
  });
  const body = await res.text();
  assert.equal(res.status, 201, body);
  const [queued] = JSON.parse(body) as Message[];
  assert.ok(queued);
  let last: Message = queued;
  try {
    return await until(
      `message ${queued.Id} Delivered`,
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const view = await fetch(`http://127.0.0.1:${port}/v1/sms/view?id=${queued.Id}`, { headers });
        last = (await view.json()) as Message;
        return last.Status_Description === 'Delivered' ? last : undefined;
      },
      30_000,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen: ${JSON.stringify(last)}`, { cause: err });
  }
}

/** `podman stop -t 10` (SIGTERM, SIGKILL after 10 s): asserts exit code 0 well within the 10 s. */
async function stopGracefully(t: TestContext, name: string): Promise<void> {
  const { ms } = await podman(['stop', '-t', '10', name], { timeoutMs: 30_000 });
  const state = await inspect('container', name);
  t.diagnostic(`${name}: SIGTERM to exit ${state.State.ExitCode} in ${ms} ms`);
  assert.equal(state.State.ExitCode, 0, `${name} exit code after SIGTERM`);
  assert.ok(ms < 10_000, `${name} stopped in ${ms} ms`);
}

/** The effective user of the container's PID 1, from `id -u` and /proc/1/status. */
async function assertNonRoot(name: string): Promise<void> {
  const uid = Number((await exec(name, ['id', '-u'])).trim());
  assert.notEqual(uid, 0, 'id -u');
  const status = await exec(name, ['cat', '/proc/1/status']);
  const pid1 = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status);
  assert.ok(pid1);
  assert.notEqual(Number(pid1[1]), 0, 'PID 1 real uid');
  assert.notEqual(Number(pid1[2]), 0, 'PID 1 effective uid');
  const cmdline = (await exec(name, ['cat', '/proc/1/cmdline'])).split('\0').join(' ');
  assert.match(cmdline, /^node .*\/app\/bin\/msgsvc\.js (serve|worker)/, 'PID 1 is msgsvc itself (SIGTERM reaches it)');
}

/** Runs `fn`; on failure adds the end of each container's log to the error. */
async function withLogs<T>(names: readonly string[], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const logs: string[] = [];
    for (const name of names) {
      const { stdout, stderr } = await podman(['logs', '--tail', '30', name], { allowFail: true });
      logs.push(`--- ${name}\n${stdout}${stderr}`);
    }
    (err as Error).message += `\n${logs.join('\n')}`;
    throw err;
  }
}

describe('container image', { skip: SKIP, concurrency: false }, () => {
  let buildMs = 0;
  let baseNote = '';

  before(
    async () => {
      assert.ok(which('podman'), 'CI=true: podman is required (scripts/container-test.sh installs it)');
      // What an interrupted earlier run left behind (only this test's names: msgsvc-ctest-…).
      for (const kind of ['container', 'volume', 'network']) {
        const format = kind === 'container' ? '{{.Names}}' : '{{.Name}}';
        const { stdout } = await podman([kind, 'ls', ...(kind === 'container' ? ['-a'] : []), '--format', format], { allowFail: true });
        for (const name of stdout.split('\n').filter((n) => n.startsWith('msgsvc-ctest-'))) {
          await podman([kind, 'rm', '-f', name], { allowFail: true });
        }
      }
      if (BASE_IMAGE === LOCAL_BASE) {
        const { stdout, ms } = await run('bash', [`${ROOT}test/container/base-image.sh`, LOCAL_BASE], { timeoutMs: 600_000 });
        baseNote = `${stdout.trim().split('\n').pop()} (${(ms / 1000).toFixed(1)} s)`;
      }
      const args = ['build', '--format', 'docker', '--network', 'host', '--build-arg', `BASE_IMAGE=${BASE_IMAGE}`, '-t', IMAGE];
      // Behind this machine's TLS-intercepting proxy: its CA, for the build only (the Dockerfile's
      // NODE_EXTRA_CA_CERTS argument). And the npm registry the host uses, when it is not npm's default.
      const ca = process.env.NODE_EXTRA_CA_CERTS;
      if (ca && existsSync(ca)) args.push('-v', `${ca}:/run/extra-ca.crt:ro`, '--build-arg', 'NODE_EXTRA_CA_CERTS=/run/extra-ca.crt');
      const registry = (await run('npm', ['config', 'get', 'registry'], { allowFail: true })).stdout.trim();
      if (registry && registry !== 'https://registry.npmjs.org/') args.push('--build-arg', `NPM_REGISTRY=${registry}`);
      const build = await podman([...args, ROOT], { timeoutMs: 1_200_000 });
      buildMs = build.ms;
    },
    { timeout: 1_800_000 },
  );

  after(async () => {
    for (const name of containers) await podman(['rm', '-f', '-v', '-t', '0', name], { allowFail: true });
    for (const name of volumes) await podman(['volume', 'rm', '-f', name], { allowFail: true });
    await dropTestDatabases();
  });

  test('the image: non-root, /data volume, /readyz health check, no development dependency, no test file', async (t) => {
    const image = await inspect('image', IMAGE);
    const config = image.Config;
    if (baseNote) t.diagnostic(baseNote);
    t.diagnostic(`image ${IMAGE}: ${(image.Size / 1e6).toFixed(0)} MB; base ${BASE_IMAGE}; build ${(buildMs / 1000).toFixed(1)} s`);
    assert.equal(config.User, 'msgsvc');
    assert.ok('/data' in (config.Volumes ?? {}), 'VOLUME /data');
    assert.ok(config.Env.includes('DATABASE_URL=/data/msgsvc.db'));
    assert.ok(config.Env.includes('HOST=0.0.0.0'));
    // Docker's image format keeps the health check (podman build --format docker); OCI's has none.
    const health = config.Healthcheck ?? image.Healthcheck;
    assert.deepEqual(health?.Test, ['CMD', 'node', '/app/healthcheck.cjs']);
    const probe = await podman(['run', '--rm', '--network', 'none', '--entrypoint', 'cat', IMAGE, '/app/healthcheck.cjs']);
    assert.match(probe.stdout, /fetch\('http:\/\/127\.0\.0\.1:' \+ \(process\.env\.PORT \|\| 8080\) \+ '\/readyz'/);
    assert.deepEqual([...config.Entrypoint, ...config.Cmd], ['node', '--max-semi-space-size=8', '/app/bin/msgsvc.js', 'serve']);

    // Every package directory of every node_modules, and every file of /app outside node_modules.
    const lister = `
      const fs = require('fs'), path = require('path');
      const isDir = (p) => fs.statSync(p).isDirectory();
      const packages = new Set(), files = [];
      (function walk(dir, inModules) {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
          const p = path.join(dir, e.name);
          if (e.name === 'node_modules' && e.isDirectory()) {
            for (const m of fs.readdirSync(p)) {
              if (m.startsWith('.') || !isDir(path.join(p, m))) continue;
              const names = m.startsWith('@') ? fs.readdirSync(path.join(p, m)).map((s) => m + '/' + s) : [m];
              for (const n of names) if (isDir(path.join(p, n))) { packages.add(path.relative('/app', path.join(p, n))); walk(path.join(p, n), true); }
            }
            continue;
          }
          if (!inModules) files.push(p + (e.isDirectory() ? '/' : ''));
          if (e.isDirectory()) walk(p, inModules);
        }
      })('/app', false);
      process.stdout.write(JSON.stringify({ packages: [...packages], files }));`;
    const listed = await podman(['run', '--rm', '--network', 'none', '--entrypoint', 'node', IMAGE, '-e', lister]);
    const { packages, files } = JSON.parse(listed.stdout) as { packages: string[]; files: string[] };
    assert.ok(packages.includes('node_modules/fastify') && packages.includes('node_modules/better-sqlite3'), 'production dependencies');
    // What package-lock.json marks `dev` (needed only through devDependencies) is absent, and so
    // are the build-only packages. A devDependency that a production dependency needs too (ajv,
    // for fastify) is not `dev` there, and stays.
    const devOnly = Object.entries(LOCK.packages)
      .filter(([path, entry]) => path !== '' && entry.dev)
      .map(([path]) => path);
    const name = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const forbidden = packages.filter((path) => devOnly.includes(path) || BUILD_ONLY.includes(name(path)));
    assert.deepEqual(forbidden, [], 'development and build-only packages in the image');
    const devDependencies = Object.keys(PACKAGE.devDependencies).filter((dep) => packages.includes(`node_modules/${dep}`));
    t.diagnostic(`devDependencies in the image because production dependencies need them: ${devDependencies.join(', ') || 'none'}`);
    t.diagnostic(`${packages.length} packages in node_modules, ${files.length} files and folders of msgsvc's own`);
    const tests = files.filter((f) => /(^|\/)(test|tests|bench|src)\/|\.c?test\.|\.spec\./.test(f.slice('/app'.length)));
    assert.deepEqual(tests, [], 'test files, benchmarks or sources in the image');
    assert.ok(files.includes('/app/dist/.built') && files.includes('/app/dist/console/'), 'the build and the console bundle');
  });

  test('on SQLite with a volume: healthy, an account made inside, a message Delivered, SIGTERM exits 0, data kept', async (t) => {
    const port = await freePort();
    const volume = `${RUN_ID}-data`;
    volumes.add(volume);
    const name = `${RUN_ID}-sqlite`;
    containers.add(name);
    const env = ['-e', `PORT=${port}`, '-e', 'MSGSVC_DEMO=0', '-e', 'MSGSVC_WORKERS=1'];
    const started = Date.now();
    await podman(['run', '-d', '--name', name, '--network', 'host', '-v', `${volume}:/data`, ...env, IMAGE]);
    const { token, delivered } = await withLogs([name], async () => {
      const ready = await untilReady(port);
      await waitHealthy(name);
      t.diagnostic(`SQLite: podman run to /readyz 200 in ${ready - started} ms, to healthy in ${Date.now() - started} ms`);
      await assertNonRoot(name);
      const { token } = await createAccount(name);
      const delivered = await sendUntilDelivered(port, token);
      assert.equal(delivered.Status_Id, 3);
      await stopGracefully(t, name);
      return { token, delivered };
    });

    // The data lives on the volume: a new container on it knows the account and its message.
    const again = `${RUN_ID}-sqlite-2`;
    containers.add(again);
    await podman(['run', '-d', '--name', again, '--network', 'host', '-v', `${volume}:/data`, ...env, IMAGE]);
    await withLogs([again], async () => {
      await waitHealthy(again);
      const view = await fetch(`http://127.0.0.1:${port}/v1/sms/view?id=${delivered.Id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.deepEqual(await view.json(), delivered);
      const ls = await exec(again, ['ls', '-ln', '/data']);
      assert.match(ls, /\s10001\s+10001\s.*msgsvc\.db/, 'the database file belongs to the msgsvc user');
      await stopGracefully(t, again);
    });
  });

  test("compose.yaml's msgsvc and worker services over the host's PostgreSQL and Redis", async (t) => {
    const pgSkip = STORES.find((s) => s.kind === 'postgres')!.skip;
    const rSkip = await redisSkip();
    if (pgSkip || rSkip) {
      t.skip(String(pgSkip || rSkip));
      return;
    }
    const database = new URL(await createTestDatabase());
    const redis = new URL(REDIS_TEST_URL);
    const port = await freePort();
    // compose.yaml interpolated as `docker compose` would, with the host's services in place of its
    // postgres and redis (their health checks are checked above), and the HTTP instance's own
    // dispatcher off: only the worker can deliver, so a Delivered message proves the second instance.
    const env = {
      POSTGRES_HOST: database.hostname,
      POSTGRES_PORT: database.port || '5432',
      POSTGRES_USER: decodeURIComponent(database.username),
      POSTGRES_PASSWORD: decodeURIComponent(database.password) || 'trust-auth-takes-any',
      POSTGRES_DB: database.pathname.slice(1),
      REDIS_URL: `redis://${redis.host}`,
      MSGSVC_PORT: String(port),
      MSGSVC_IMAGE: IMAGE,
      MSGSVC_DISPATCHER: '0', // `msgsvc worker` dispatches regardless
    };
    const compose = interpolateAll(readCompose(), env) as { name: string; services: Record<string, ComposeService> };
    const { msgsvc, worker } = compose.services as { msgsvc: ComposeService; worker: ComposeService };
    const project = `${RUN_ID}-${compose.name}`;
    for (const v of ['msgsvc-data']) volumes.add(`${project}_${v}`);

    const http = `${project}-msgsvc-1`;
    containers.add(http);
    const started = Date.now();
    await podman(['run', '-d', '--network', 'host', ...podmanRunArgs(msgsvc, http, project)]);
    const workers: string[] = [];
    for (let i = 1; i <= Number(worker.deploy?.replicas ?? 1); i++) {
      const name = `${project}-worker-${i}`;
      containers.add(name);
      workers.push(name);
      await podman(['run', '-d', '--network', 'host', ...podmanRunArgs(worker, name, project)]);
    }
    await withLogs([http, ...workers], async () => {
      const readyAt = await untilReady(port);
      await waitHealthy(http);
      t.diagnostic(`PostgreSQL + Redis: podman run to /readyz 200 in ${readyAt - started} ms, to healthy in ${Date.now() - started} ms`);
      const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as Record<string, string>;
      assert.equal(ready.database, 'ok');
      assert.equal(ready.redis, 'ok');
      assert.equal(ready.carrier, 'not running', 'the HTTP instance dispatches nothing here');
      for (const name of workers) await waitHealthy(name, 30_000); // the image's check: `msgsvc worker` runs
      await assertNonRoot(http);
      await assertNonRoot(workers[0]!);
      const { token } = await createAccount(http);
      const delivered = await sendUntilDelivered(port, token);
      assert.equal(delivered.Status_Id, 3);
      await stopGracefully(t, http);
      for (const name of workers) await stopGracefully(t, name);
    });
  });
  test('compose.yaml run by podman-compose, stand-ins for the postgres and redis images, two worker replicas', async (t) => {
    if (!which('podman-compose')) {
      if (CI) assert.fail('CI=true: podman-compose is required (apt-get install podman-compose)');
      t.skip('podman-compose not installed (apt-get install podman-compose)');
      return;
    }
    // No registry: Debian's PostgreSQL and Redis on the local base, behind entrypoints that do what
    // the official images' do for compose.yaml (test/container/standins/README.md).
    const standins: Record<string, string> = {};
    for (const service of ['postgres', 'redis']) {
      standins[service] = `localhost/msgsvc-standin-${service}:test`;
      const dir = `${ROOT}test/container/standins`;
      const args = ['build', '--format', 'docker', '--network', 'host', '--build-arg', `BASE_IMAGE=${BASE_IMAGE}`];
      await podman([...args, '-t', standins[service], '-f', `${dir}/${service}.Containerfile`, dir], { timeoutMs: 600_000 });
    }
    // podman-compose runs plain `podman`: a wrapper adds this machine's flags.
    const bin = mkdtempSync(join(tmpdir(), 'msgsvc-ctest-'));
    const wrapper = join(bin, 'podman');
    writeFileSync(wrapper, `#!/bin/sh\nexec ${PODMAN.map((a) => `'${a}'`).join(' ')} "$@"\n`, { mode: 0o755 });
    const project = `${RUN_ID}-compose`;
    const port = await freePort();
    const env = {
      ...process.env,
      POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
      MSGSVC_IMAGE: IMAGE,
      POSTGRES_IMAGE: standins.postgres,
      REDIS_IMAGE: standins.redis,
      MSGSVC_PUBLISH: `127.0.0.1:${port}`,
      MSGSVC_WORKER_REPLICAS: '2',
      MSGSVC_DISPATCHER: '0', // only the workers deliver: a Delivered message proves them
    };
    const compose = (...args: string[]) =>
      run('podman-compose', ['--podman-path', wrapper, '-p', project, '-f', fileURLToPath(COMPOSE_FILE), ...args], {
        env,
        cwd: ROOT,
        timeoutMs: 180_000,
      });
    const names = ['postgres_1', 'redis_1', 'msgsvc_1', 'worker_1', 'worker_2'].map((n) => `${project}_${n}`);
    const [postgres, redis, msgsvc, ...workers] = names as [string, string, string, ...string[]];
    try {
      const started = Date.now();
      await compose('up', '-d');
      await withLogs(names, async () => {
        for (const name of [postgres, redis, msgsvc]) await waitHealthy(name, 120_000);
        t.diagnostic(`podman-compose up -d to every service healthy in ${Date.now() - started} ms`);
        const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as Record<string, string>;
        assert.deepEqual([ready.database, ready.redis, ready.carrier], ['ok', 'ok', 'not running']);
        // A worker serves no /readyz: the image's check finds `msgsvc worker` running instead.
        for (const worker of workers) await waitHealthy(worker, 30_000);
        const { token } = await createAccount(msgsvc);
        const delivered = await sendUntilDelivered(port, token);
        assert.equal(delivered.Status_Id, 3);
        // Dependents first, as Docker Compose stops them: this podman-compose stops the services in
        // no such order, and once PostgreSQL had gone first, one worker replica outlasted the 10 s
        // and was killed (137). A worker that loses its database while stopping is not what this
        // case is about: SIGTERM to msgsvc and each worker, with their services up, ends in exit 0.
        const stop = await compose('stop', 'msgsvc', 'worker');
        t.diagnostic(`podman-compose stop msgsvc worker: ${stop.ms} ms`);
        await compose('stop');
        for (const name of [msgsvc, ...workers]) {
          assert.equal((await inspect('container', name)).State.ExitCode, 0, `${name} exit code after SIGTERM`);
        }
      });
    } finally {
      await compose('down', '-v').catch(() => undefined);
      await podman(['network', 'rm', '-f', `${project}_default`], { allowFail: true });
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
