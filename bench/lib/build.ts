/**
 * A build of the checkout that does not touch its dist/ (others may be running tests on it):
 * src/ compiled into `DIR/app/dist` beside a copy of bin/ and package.json and a link to
 * node_modules, so `DIR/app/bin/msgsvc.js` runs that build, as `npm start` runs dist/.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Compiles src/ into `dir`/app and returns the app's root (its bin/msgsvc.js runs the build). */
export function buildCopy(dir: string): string {
  const app = join(dir, 'app');
  mkdirSync(join(app, 'bin'), { recursive: true });
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(app, 'dist')],
    { stdio: 'inherit' },
  );
  if (tsc.status !== 0) throw new Error('tsc failed');
  writeFileSync(join(app, 'dist', '.built'), '');
  for (const f of ['msgsvc.js', 'entry.js']) copyFileSync(join(ROOT, 'bin', f), join(app, 'bin', f));
  copyFileSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'), 'dir');
  return app;
}
