import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, parseDatabaseUrl, type ConfigSource } from '../src/config.ts';

describe('loadConfig defaults', () => {
  test('an empty environment gives the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, '127.0.0.1');
    assert.deepEqual(c.database, { kind: 'sqlite', path: './data/msgsvc.db', checkpointMs: 0 });
    assert.equal(c.rateLimit, 60);
    assert.equal(c.rateWindowSeconds, 1);
    assert.equal(c.timeZone, 'UTC');
    assert.equal(c.defaultRegion, 'US');
    assert.equal(c.demo, true);
    assert.equal(c.bodyLimitBytes, 102_400);
    assert.equal(c.logLevel, 'info');
  });
  test('empty strings also mean the default', () => {
    const c = loadConfig({ PORT: '', MSGSVC_RATE_LIMIT: '', MSGSVC_TIMEZONE: '', MSGSVC_DEMO: '', DATABASE_URL: '' });
    assert.equal(c.port, 8080);
    assert.equal(c.rateLimit, 60);
    assert.equal(c.timeZone, 'UTC');
    assert.equal(c.demo, true);
    assert.equal(c.database.kind, 'sqlite');
  });
  test('the config is frozen', () => assert.ok(Object.isFrozen(loadConfig({}))));
});

describe('loadConfig reads valid values', () => {
  test('all settings', () => {
    const c = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u:p@localhost/db',
      MSGSVC_RATE_LIMIT: '5',
      MSGSVC_RATE_WINDOW: '60',
      MSGSVC_TIMEZONE: 'Europe/Berlin',
      MSGSVC_DEFAULT_REGION: 'gb',
      MSGSVC_DEMO: '0',
      MSGSVC_BODY_LIMIT: '1024',
      LOG_LEVEL: 'WARN',
    });
    assert.equal(c.port, 0);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.database.kind, 'postgres');
    assert.equal(c.database.kind === 'postgres' && c.database.url, 'postgres://u:p@localhost/db');
    assert.equal(c.rateLimit, 5);
    assert.equal(c.rateWindowSeconds, 60);
    assert.equal(c.timeZone, 'Europe/Berlin');
    assert.equal(c.defaultRegion, 'GB');
    assert.equal(c.demo, false);
    assert.equal(c.bodyLimitBytes, 1024);
    assert.equal(c.logLevel, 'warn');
  });
  test('MSGSVC_DEMO spellings', () => {
    for (const v of ['1', 'true', 'yes', 'on', 'TRUE', ' On ']) assert.equal(loadConfig({ MSGSVC_DEMO: v }).demo, true, v);
    for (const v of ['0', 'false', 'no', 'off', 'OFF']) assert.equal(loadConfig({ MSGSVC_DEMO: v }).demo, false, v);
  });
  test('numbers may carry surrounding whitespace', () => assert.equal(loadConfig({ PORT: ' 9000 ' }).port, 9000));
});

describe('loadConfig rejects bad values with a ConfigError naming the variable', () => {
  const bad: [string, ConfigSource][] = [
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['PORT', { PORT: '-1' }],
    ['PORT', { PORT: '80.5' }],
    ['MSGSVC_RATE_LIMIT', { MSGSVC_RATE_LIMIT: '0' }],
    ['MSGSVC_RATE_LIMIT', { MSGSVC_RATE_LIMIT: 'abc' }],
    ['MSGSVC_RATE_WINDOW', { MSGSVC_RATE_WINDOW: 'x' }],
    ['MSGSVC_RATE_WINDOW', { MSGSVC_RATE_WINDOW: '0' }],
    ['MSGSVC_TIMEZONE', { MSGSVC_TIMEZONE: 'Mars/Base' }],
    ['MSGSVC_DEFAULT_REGION', { MSGSVC_DEFAULT_REGION: 'XX' }],
    ['MSGSVC_DEFAULT_REGION', { MSGSVC_DEFAULT_REGION: 'USA' }],
    ['MSGSVC_DEMO', { MSGSVC_DEMO: 'maybe' }],
    ['MSGSVC_BODY_LIMIT', { MSGSVC_BODY_LIMIT: '-1' }],
    ['MSGSVC_BODY_LIMIT', { MSGSVC_BODY_LIMIT: '0' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['DATABASE_URL', { DATABASE_URL: 'sqlite:' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
  ];
  for (const [name, source] of bad) {
    test(`${name}=${JSON.stringify(Object.values(source)[0])}`, () => {
      assert.throws(
        () => loadConfig(source),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
          assert.equal(err.name, 'ConfigError');
          assert.match(err.message, new RegExp(`\\b${name}\\b`));
          return true;
        },
      );
    });
  }
});

describe('parseDatabaseUrl', () => {
  const cases: [string | undefined, { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string }][] = [
    [undefined, { kind: 'sqlite', path: './data/msgsvc.db' }],
    ['', { kind: 'sqlite', path: './data/msgsvc.db' }],
    ['./data/x.db', { kind: 'sqlite', path: './data/x.db' }],
    ['/tmp/abs/x.db', { kind: 'sqlite', path: '/tmp/abs/x.db' }],
    ['x.db', { kind: 'sqlite', path: 'x.db' }],
    ['sqlite:./data/x.db', { kind: 'sqlite', path: './data/x.db' }],
    ['sqlite:/tmp/x.db', { kind: 'sqlite', path: '/tmp/x.db' }],
    ['sqlite://./data/x.db', { kind: 'sqlite', path: './data/x.db' }],
    ['sqlite:///tmp/x.db', { kind: 'sqlite', path: '/tmp/x.db' }],
    ['SQLITE:x.db', { kind: 'sqlite', path: 'x.db' }],
    ['sqlite::memory:', { kind: 'sqlite', path: ':memory:' }],
    ['postgres://u@h/db', { kind: 'postgres', url: 'postgres://u@h/db' }],
    ['postgresql://u@h:5432/db', { kind: 'postgres', url: 'postgresql://u@h:5432/db' }],
  ];
  for (const [raw, expected] of cases) {
    test(`${JSON.stringify(raw)}`, () => {
      const got = parseDatabaseUrl(raw);
      if (expected.kind === 'postgres') {
        // Pool settings may ride along; only the kind and URL matter here.
        assert.equal(got.kind, 'postgres');
        assert.equal(got.kind === 'postgres' && got.url, expected.url);
      } else {
        assert.deepEqual(got, expected);
      }
    });
  }
  test('other schemes are rejected', () => {
    for (const raw of ['mysql://x', 'http://h/db', 'redis://h']) {
      assert.throws(
        () => parseDatabaseUrl(raw),
        (err: unknown) => err instanceof ConfigError && /DATABASE_URL/.test(err.message),
        raw,
      );
    }
  });
});

describe('MSGSVC_WORKERS (serve --workers)', () => {
  test('unset, blank and auto: the cores minus one, at least 1', async () => {
    const { availableParallelism } = await import('node:os');
    const auto = Math.max(1, availableParallelism() - 1);
    for (const raw of [undefined, '', 'auto', ' AUTO ']) assert.equal(loadConfig({ MSGSVC_WORKERS: raw }).workers, auto, String(raw));
  });
  test('a whole number from 1 to 256', () => {
    assert.equal(loadConfig({ MSGSVC_WORKERS: '1' }).workers, 1);
    assert.equal(loadConfig({ MSGSVC_WORKERS: '16' }).workers, 16);
    assert.equal(loadConfig({ MSGSVC_WORKERS: '256' }).workers, 256);
  });
  test('anything else is a ConfigError naming the setting', () => {
    for (const raw of ['0', '257', '-1', '1.5', 'x', 'auto2']) {
      assert.throws(
        () => loadConfig({ MSGSVC_WORKERS: raw }),
        (err: unknown) =>
          err instanceof ConfigError && err.message.startsWith('MSGSVC_WORKERS must be a whole number between 1 and 256, or auto'),
        raw,
      );
    }
  });
});
