#!/usr/bin/env node
// The `msgsvc` command: the built JavaScript in dist/ when it is up to date (`npm run build`, which
// npm install runs), otherwise the TypeScript sources through tsx. See bin/entry.js.
//
// The command line (src/cli/) reads the arguments; `serve` and `worker` then run the process shell
// (src/main.ts), loaded only for them: the other commands need no HTTP stack and start faster
// without it. Nothing in src/ imports the shell; it is wired in here.
import { fileURLToPath } from 'node:url';
import { chooseEntry } from './entry.js';

const { entry, stale } = chooseEntry(fileURLToPath(new URL('..', import.meta.url)));
let cli;
let loadShell;
if (entry === 'dist') {
  cli = await import('../dist/cli/index.js');
  loadShell = () => import('../dist/main.js');
} else {
  if (stale && process.argv[2] === 'serve') {
    process.stderr.write('msgsvc: dist/ is older than src/, so the sources run through tsx (`npm run build` makes start-up faster)\n');
  }
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import('../src/cli/index.ts');
  loadShell = () => import('../src/main.ts');
}
await cli.runCli(process.argv, {
  serve: async (config) => (await loadShell()).serve(config),
  worker: async (config) => (await loadShell()).worker(config),
});
