/** `msgsvc demo`: a NEW account with sample data (src/domain/demo.ts), its token and curl lines. */
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import { createDemoAccount, demoCurlLines } from '../domain/demo.ts';
import { createTimeFormat } from '../lib/time.ts';
import { recordMappers } from '../records/index.ts';
import { out, withStore } from './common.ts';

/** Adds the `demo` command to `program`; `config` reads the configuration when the command runs. */
export function addDemoCommand(program: Command, config: () => Config): void {
  program
    .command('demo')
    .description('create a NEW account with sample data and a token')
    .option('--json', 'print one JSON object: account, token and every record as the API shows it')
    .option('--base-url <url>', 'server address for the printed curl lines', 'http://127.0.0.1:8080')
    .action(async (opts: { json?: boolean; baseUrl: string }) => {
      const cfg = config();
      const demo = await withStore(cfg, (store) =>
        createDemoAccount(store, recordMappers(createTimeFormat(cfg.timeZone)), cfg.defaultRegion, undefined, { history: true }),
      );
      if (opts.json) out(demo);
      else {
        out(`account ${demo.account.id} (${demo.account.name})\naccess token: ${demo.token}\n`);
        for (const line of demoCurlLines(opts.baseUrl, demo)) out(line);
      }
    });
}
