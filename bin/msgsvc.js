#!/usr/bin/env node
// The `msgsvc` command. Sources are TypeScript, loaded through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/index.ts');
await runCli(process.argv);
