// docs/deploy.md (issue 14): every configuration on that page is checked by the tool that owns it,
// `systemd-analyze verify`, `haproxy -c` and `nginx -t` (Debian packages systemd, haproxy, nginx).
// A test whose tool is missing skips with one line saying so.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const PAGE = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');

/** The fenced blocks marked `<!-- deploy-config: NAME -->` on the page, by NAME. */
function configs(): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of PAGE.matchAll(/<!-- deploy-config: (\S+) -->\n```[\w-]*\n([\s\S]*?)```/g)) found.set(m[1]!, m[2]!);
  return found;
}

/** The path of `tool` when it can run (in PATH or in the sbin directories), else undefined. */
function tool(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/bin'])) {
    const path = join(dir, name);
    if (dir && existsSync(path)) return path;
  }
  return undefined;
}

function run(cmd: string, args: string[]) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

function scratch(t: { after(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-deploy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('docs/deploy.md holds the systemd unit, the HAProxy and the nginx configurations', () => {
  assert.deepEqual([...configs().keys()].sort(), ['haproxy.cfg', 'msgsvc@.service', 'nginx-msgsvc.conf']);
  const haproxy = configs().get('haproxy.cfg')!;
  assert.match(haproxy, /http-check send meth GET uri \/readyz/);
  assert.ok((haproxy.match(/^\s+server msgsvc\d+ /gm) ?? []).length >= 2, 'N instances');
  assert.match(configs().get('msgsvc@.service')!, /^Environment=PORT=%i$/m);
});

test('the systemd unit passes systemd-analyze verify', (t) => {
  const analyze = tool('systemd-analyze');
  if (!analyze) return t.skip('systemd-analyze not installed (Debian package systemd): unit not verified');
  const dir = scratch(t);
  let unit = configs().get('msgsvc@.service')!;
  // The unit names Debian's node; elsewhere verify the same unit with the node that runs this test.
  if (!existsSync('/usr/bin/node')) unit = unit.replaceAll('/usr/bin/node', process.execPath);
  writeFileSync(join(dir, 'msgsvc@.service'), unit);
  writeFileSync(join(dir, 'msgsvc@8081.service'), unit);
  for (const name of ['msgsvc@.service', 'msgsvc@8081.service']) {
    const r = run(analyze, ['verify', join(dir, name)]);
    assert.equal(r.status, 0, r.output);
    // Warnings (an unknown key, a bad value) do not change the status: there must be none.
    assert.equal(
      r.output
        .split('\n')
        .filter((l) => l.includes('msgsvc@'))
        .join('\n'),
      '',
      r.output,
    );
  }
});

test('the HAProxy configuration passes haproxy -c', (t) => {
  const haproxy = tool('haproxy');
  if (!haproxy) return t.skip('haproxy not installed (apt-get install haproxy): configuration not checked');
  const dir = scratch(t);
  writeFileSync(join(dir, 'haproxy.cfg'), configs().get('haproxy.cfg')!);
  const r = run(haproxy, ['-c', '-f', join(dir, 'haproxy.cfg')]);
  assert.equal(r.status, 0, r.output);
  assert.doesNotMatch(r.output, /\[WARNING\]|\[ALERT\]/, r.output);
});

test('the nginx configuration passes nginx -t', (t) => {
  const nginx = tool('nginx');
  if (!nginx) return t.skip('nginx not installed (apt-get install nginx): configuration not checked');
  const dir = scratch(t);
  writeFileSync(join(dir, 'msgsvc.conf'), configs().get('nginx-msgsvc.conf')!);
  // The page's file goes inside `http { }`, as /etc/nginx/conf.d/*.conf does.
  writeFileSync(
    join(dir, 'nginx.conf'),
    `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  access_log off;\n  include ${dir}/msgsvc.conf;\n}\n`,
  );
  const r = run(nginx, ['-t', '-q', '-p', dir, '-c', join(dir, 'nginx.conf')]);
  assert.equal(r.status, 0, r.output);
  assert.doesNotMatch(r.output, /\[warn\]|\[emerg\]/, r.output);
});
