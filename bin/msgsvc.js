#!/usr/bin/env node
// The `msgsvc` command: the built JavaScript in dist/ when it is up to date (`npm run build`, which
// npm install runs), otherwise the TypeScript sources through tsx. See bin/entry.js.
import { fileURLToPath } from 'node:url';
import { chooseEntry } from './entry.js';

const { entry, stale } = chooseEntry(fileURLToPath(new URL('..', import.meta.url)));
let cli;
if (entry === 'dist') {
  cli = await import('../dist/cli/index.js');
} else {
  if (stale && process.argv[2] === 'serve') {
    process.stderr.write('msgsvc: dist/ is older than src/, so the sources run through tsx (`npm run build` makes start-up faster)\n');
  }
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import('../src/cli/index.ts');
}
await cli.runCli(process.argv);
