import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, type Config, type ConfigSource } from '../config.ts';
import { createAccount, issueToken } from '../domain/accounts.ts';
import { createDemoAccount, demoCurlLines } from '../domain/demo.ts';
import { normalisePhone } from '../domain/phone.ts';
import { NUMBER_STATUSES, recordMappers } from '../domain/records.ts';
import { createTimeFormat, nowSeconds } from '../domain/time.ts';
import { hashToken } from '../http/plugins/auth.ts';
import { serve } from '../main.ts';
import { migrateToLatest, openStore, type Store } from '../store/db.ts';
import * as accounts from '../store/repositories/accounts.ts';
import * as numbers from '../store/repositories/numbers.ts';

/** `--flag` → environment variable it stands for; flags win over the environment. */
const FLAG_ENV: Record<string, string> = {
  port: 'PORT',
  host: 'HOST',
  databaseUrl: 'DATABASE_URL',
  rateLimit: 'MSGSVC_RATE_LIMIT',
  rateWindow: 'MSGSVC_RATE_WINDOW',
  timezone: 'MSGSVC_TIMEZONE',
  defaultRegion: 'MSGSVC_DEFAULT_REGION',
  bodyLimit: 'MSGSVC_BODY_LIMIT',
  logLevel: 'LOG_LEVEL',
};

function configFrom(opts: Record<string, unknown>): Config {
  const source: ConfigSource = { ...process.env };
  for (const [flag, env] of Object.entries(FLAG_ENV)) {
    if (opts[flag] !== undefined) source[env] = String(opts[flag]);
  }
  if (opts.demo === false) source.MSGSVC_DEMO = '0';
  return loadConfig(source);
}

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive whole number');
  return Number(value);
}

function wholeNumber(value: string): number {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}

/** Opens and migrates the configured database, runs `fn`, and always closes it. */
async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function requireAccount(store: Store, id: number): Promise<void> {
  if (!(await accounts.findAccount(store.db, id))) throw new CliError(`no account with id ${id}`);
}

class CliError extends Error {}

function out(value: unknown): void {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
}

/** Builds the `msgsvc` command line (commander). */
export function buildCli(): Command {
  const program = new Command('msgsvc')
    .description('Messaging Service HTTP API v1 server and operator tools')
    .option('--database-url <url>', 'database: a file path, sqlite:PATH or postgres://… (env DATABASE_URL)')
    .showHelpAfterError();
  const global = () => program.opts();
  const config = (local: Record<string, unknown> = {}) => configFrom({ ...global(), ...local });

  program
    .command('serve')
    .description('run the HTTP server (creates a demo account on first start)')
    .option('--port <n>', 'TCP port (env PORT, default 8080)')
    .option('--host <addr>', 'interface to bind (env HOST, default 127.0.0.1)')
    .option('--rate-limit <n>', 'requests per account per window (env MSGSVC_RATE_LIMIT, default 60)')
    .option('--rate-window <seconds>', 'rate-limit window in seconds (env MSGSVC_RATE_WINDOW, default 1)')
    .option('--timezone <tz>', 'IANA time zone for timestamps (env MSGSVC_TIMEZONE, default UTC)')
    .option('--default-region <cc>', 'region for numbers without a country code (env MSGSVC_DEFAULT_REGION, default US)')
    .option('--body-limit <bytes>', 'largest request body in bytes (env MSGSVC_BODY_LIMIT, default 102400)')
    .option('--log-level <level>', 'pino log level (env LOG_LEVEL, default info)')
    .option('--no-demo', 'do not create a demo account on first start (env MSGSVC_DEMO=0)')
    .action(async (opts) => serve(config(opts)));

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const applied = await withStore(config(), async (store) => {
        // withStore already migrated; report what the schema holds now.
        return store.dialect;
      });
      out(`migrations applied (${applied})`);
    });

  const accountsCmd = program.command('accounts').description('manage accounts');
  accountsCmd
    .command('create')
    .description('create an account; prints {"id":…,"name":…}')
    .requiredOption('--name <name>', 'account name')
    .action(async (opts: { name: string }) => {
      const id = await withStore(config(), (store) => createAccount(store, opts.name));
      out({ id, name: opts.name });
    });

  const tokensCmd = program.command('tokens').description('manage API tokens');
  tokensCmd
    .command('create')
    .description('issue a token; prints it once (only its hash is stored)')
    .requiredOption('--account <id>', 'account id', positiveInt)
    .option('--label <text>', 'a note to recognise the token by', '')
    .action(async (opts: { account: number; label: string }) => {
      const { token, id } = await withStore(config(), async (store) => {
        await requireAccount(store, opts.account);
        return issueToken(store, opts.account, opts.label);
      });
      process.stderr.write(`token id ${id} for account ${opts.account}; store it now, it is not shown again\n`);
      out(token);
    });
  tokensCmd
    .command('revoke')
    .description('revoke a token by its id or by the token itself')
    .option('--id <id>', 'token id (as printed by tokens create)', positiveInt)
    .option('--token <token>', 'the token')
    .action(async (opts: { id?: number; token?: string }) => {
      if ((opts.id === undefined) === (opts.token === undefined)) throw new CliError('give exactly one of --id or --token');
      const n = await withStore(config(), (store) =>
        accounts.revokeToken(store.db, opts.id !== undefined ? { id: opts.id } : { tokenHash: hashToken(opts.token!) }, nowSeconds()),
      );
      if (n === 0) throw new CliError('no live token matched');
      out('token revoked');
    });

  const creditsCmd = program.command('credits').description('manage the credit balance');
  for (const mode of ['set', 'add'] as const) {
    creditsCmd
      .command(mode)
      .description(mode === 'set' ? 'set the balance' : 'add to the balance (negative subtracts)')
      .requiredOption('--account <id>', 'account id', positiveInt)
      .requiredOption('--amount <n>', 'credits', wholeNumber)
      .action(async (opts: { account: number; amount: number }) => {
        const balance = await withStore(config(), async (store) => {
          await requireAccount(store, opts.account);
          return accounts.changeCredits(store.db, opts.account, opts.amount, mode, nowSeconds());
        });
        out({ AvailableCredits: balance });
      });
  }

  const numbersCmd = program.command('numbers').description("manage the account's numbers");
  numbersCmd
    .command('add')
    .description('add a short code or long number to an account')
    .requiredOption('--account <id>', 'account id', positiveInt)
    .requiredOption('--number <number>', 'short code (3-8 digits) or phone number')
    .addOption(new Option('--status <id>', 'Status_Id: 0 Active, 1 Inactive, 301 Temporarily blocked, 302 Permanently blocked').default('0'))
    .action(async (opts: { account: number; number: string; status: string }) => {
      const status = Number(opts.status);
      if (!/^\d+$/.test(opts.status) || NUMBER_STATUSES[status] === undefined) {
        throw new CliError(`--status must be one of ${Object.keys(NUMBER_STATUSES).join(', ')}`);
      }
      const cfg = config();
      let digits: string;
      if (/^\d{3,8}$/.test(opts.number)) digits = opts.number;
      else {
        const phone = normalisePhone(opts.number, cfg.defaultRegion);
        if (!phone) throw new CliError(`not a short code or phone number: ${opts.number}`);
        digits = phone.digits;
      }
      await withStore(cfg, async (store) => {
        await requireAccount(store, opts.account);
        const now = nowSeconds();
        await numbers.insertNumber(store.db, opts.account, digits, status, status === 301 || status === 302 ? now : null, now);
      });
      out({ Number: digits, Status_Id: status, Status_Description: NUMBER_STATUSES[status] });
    });

  program
    .command('demo')
    .description('create a NEW account with sample data and a token')
    .option('--json', 'print one JSON object: account, token and every record as the API shows it')
    .option('--base-url <url>', 'server address for the printed curl lines', 'http://127.0.0.1:8080')
    .action(async (opts: { json?: boolean; baseUrl: string }) => {
      const cfg = config();
      const demo = await withStore(cfg, (store) => createDemoAccount(store, recordMappers(createTimeFormat(cfg.timeZone)), cfg.defaultRegion));
      if (opts.json) out(demo);
      else {
        out(`account ${demo.account.id} (${demo.account.name})\naccess token: ${demo.token}\n`);
        for (const line of demoCurlLines(opts.baseUrl, demo)) out(line);
      }
    });

  return program;
}

/** Runs the CLI; reports errors in one line and exits 1 (2 for bad configuration). */
export async function runCli(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`msgsvc: configuration error: ${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof CliError) {
      process.stderr.write(`msgsvc: ${err.message}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`msgsvc: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    }
  }
}
