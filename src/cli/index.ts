import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, type Config, type ConfigSource } from '../config.ts';
import { createAccount, issueToken } from '../domain/accounts.ts';
import { addDemoCommand } from './demo.ts';
import { CliError, out, withStore } from './common.ts';
import { generateAccount } from '../domain/generate.ts';
import { importContacts } from '../domain/contacts-import.ts';
import { ValidationFailedError } from '../domain/errors.ts';
import { createReadStream, statSync } from 'node:fs';
import { normalisePhone } from '../domain/phone.ts';
import { NUMBER_STATUSES } from '../records/statuses.ts';
import { nowSeconds } from '../lib/time.ts';
import { hashToken } from '../domain/tokens.ts';
import { createRequire } from 'node:module';
import { inTransaction, type Store } from '../store/db.ts';
import * as accounts from '../store/repositories/accounts.ts';
import * as numbers from '../store/repositories/numbers.ts';
import { isUniqueViolation } from '../store/errors.ts';

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
  workers: 'MSGSVC_WORKERS',
};

function configFrom(opts: Record<string, unknown>): Config {
  const source: ConfigSource = { ...process.env };
  for (const [flag, env] of Object.entries(FLAG_ENV)) {
    // Commander's value of each of these flags is its text (none has a parser).
    const value = opts[flag] as string | undefined;
    if (value !== undefined) source[env] = String(value);
  }
  if (opts.demo === false) source.MSGSVC_DEMO = '0';
  return loadConfig(source);
}

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive whole number');
  return Number(value);
}

function wholeNumber(value: string): number {
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}

async function requireAccount(store: Store, id: number): Promise<void> {
  if (!(await accounts.findAccount(store.db, id))) throw new CliError(`no account with id ${id}`);
}

/** The version in package.json (the same file in a checkout and in dist/'s parent). */
function packageVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}

/**
 * What `msgsvc serve` and `msgsvc worker` run once the command line is read: src/main.ts, which
 * bin/msgsvc.js passes in (the process shell is imported by nothing in src/). Each resolves once
 * started; a rejection is reported as any command's error.
 */
export interface ProcessShell {
  serve(config: Config): Promise<void>;
  worker(config: Config): Promise<void>;
}

/** Builds the `msgsvc` command line (commander); `serve` and `worker` run `shell`'s. */
export function buildCli(shell: ProcessShell): Command {
  const program = new Command('msgsvc')
    .description('Messaging Service HTTP API v1 server and operator tools')
    .version(packageVersion(), '-V, --version', 'print the msgsvc version')
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
    .option('--workers <n|auto>', 'HTTP worker processes sharing the port, 1 to 256 or auto = cores - 1 (env MSGSVC_WORKERS, default auto)')
    .action(async (opts: Record<string, unknown>) => {
      await shell.serve(config(opts));
    });

  program
    .command('worker')
    .description('run the dispatcher alone, without HTTP: queued messages to the carrier, receipts back to the log')
    .option('--log-level <level>', 'pino log level (env LOG_LEVEL, default info)')
    .action(async (opts: Record<string, unknown>) => {
      await shell.worker(config(opts));
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      // withStore already migrated; report what the schema holds now.
      const applied = await withStore(config(), (store) => Promise.resolve(store.dialect));
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
    .description('issue a key with scope * (docs/API.md §15.2); prints its secret once (only its hash is stored)')
    .requiredOption('--account <id>', 'account id', positiveInt)
    .option('--name <text>', "the key's Name (1 to 64 characters)", 'cli')
    .option('--label <text>', 'a note to recognise the token by', '')
    .action(async (opts: { account: number; label: string; name: string }) => {
      const name = opts.name.trim();
      if (name.length < 1 || [...name].length > 64) throw new CliError('--name must be 1 to 64 characters');
      const { token, id } = await withStore(config(), async (store) => {
        await requireAccount(store, opts.account);
        return issueToken(store, opts.account, opts.label, name);
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
          // Read and write in one transaction, so a concurrent debit cannot slip in between.
          return inTransaction(store, async (tx) => {
            const available = await accounts.getCredits(tx, opts.account);
            // Keep AvailableCredits an exact integer (JSON and the bigint column), never below zero.
            const next = mode === 'set' ? opts.amount : available + opts.amount;
            if (!Number.isSafeInteger(next)) throw new CliError(`the balance would be ${next}, beyond ±${Number.MAX_SAFE_INTEGER}`);
            if (next < 0)
              throw new CliError(`the balance would be ${next}: AvailableCredits cannot go below zero (available: ${available})`);
            return accounts.changeCredits(tx, opts.account, opts.amount, mode, nowSeconds(), {
              type: mode === 'add' && opts.amount > 0 ? 'topup' : 'adjustment',
              note: `msgsvc credits ${mode}`,
            });
          });
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
    .addOption(
      new Option('--status <id>', 'Status_Id: 0 Active, 1 Inactive, 301 Temporarily blocked, 302 Permanently blocked').default('0'),
    )
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
        try {
          await numbers.insertNumber(store.db, opts.account, digits, status, status === 301 || status === 302 ? now : null, now);
        } catch (err) {
          if (isUniqueViolation(err)) throw new CliError(`account ${opts.account} already has the number ${digits}`);
          throw err;
        }
      });
      out({ Number: digits, Status_Id: status, Status_Description: NUMBER_STATUSES[status] });
    });

  addDemoCommand(program, () => config());

  const contactsCmd = program.command('contacts').description("manage an account's contacts");
  contactsCmd
    .command('import')
    .description('create and update contacts from a CSV file, as POST /v1/contacts/import does; prints its JSON report')
    .requiredOption('--account <id>', 'account id', positiveInt)
    .argument('<file>', 'CSV file: a header row naming the columns (Number required), then one contact per row')
    .action(async (file: string, opts: { account: number }) => {
      // contacts/import (API.md §10.2) on a file: the same rules, the same report (stdout, JSON),
      // with a progress bar on stderr (redrawn on a terminal, one line per 10 % otherwise).
      let size: number;
      try {
        const stat = statSync(file);
        if (!stat.isFile()) throw new Error('not a file');
        size = stat.size;
      } catch {
        throw new CliError(`cannot read ${file}`);
      }
      const cfg = config();
      const report = await withStore(cfg, async (store) => {
        await requireAccount(store, opts.account);
        const bar = progressBar('bytes');
        const input = createReadStream(file);
        try {
          const result = await importContacts(store, opts.account, input, {
            region: cfg.defaultRegion,
            onProgress: (bytes) => bar.update({ done: bytes, total: size }),
          });
          bar.done(`${result.Created} created, ${result.Updated} updated, ${result.Failed} failed`);
          return result;
        } catch (err) {
          // A file rejected whole (unknown column…): the same list the API answers with 422.
          if (err instanceof ValidationFailedError) throw new CliError(`file rejected, nothing written: ${JSON.stringify(err.errors)}`);
          throw err;
        } finally {
          input.destroy();
        }
      });
      out(report);
    });

  program
    .command('generate')
    .description('create a NEW account with N contacts and related rows (load testing); prints a JSON summary with its token')
    .requiredOption('--contacts <n>', 'contacts to create (e.g. 10000, 100000, 1000000)', wholeNumberAtLeast0)
    .option('--messages <n>', 'scheduled messages to create (default: as many as contacts)', wholeNumberAtLeast0)
    .option('--log-messages <n>', 'Delivered messages to put in the message log (default 0)', wholeNumberAtLeast0)
    .option('--name <name>', 'account name')
    .action(async (opts: { contacts: number; messages?: number; logMessages?: number; name?: string }) => {
      const bar = progressBar('contacts');
      const summary = await withStore(config(), (store) =>
        generateAccount(
          store,
          {
            contacts: opts.contacts,
            ...(opts.messages !== undefined ? { messages: opts.messages } : {}),
            ...(opts.logMessages !== undefined ? { logMessages: opts.logMessages } : {}),
            ...(opts.name ? { name: opts.name } : {}),
          },
          (progress) => bar.update(progress),
        ),
      );
      bar.done(
        `${summary.rows.contacts} contacts, ${summary.rows.groupMembers} memberships, ${summary.rows.customFieldEntries} entries, ${summary.rows.scheduledMessages} scheduled messages, ${summary.rows.logMessages} messages in the log in ${summary.seconds} s`,
      );
      out(summary);
    });

  return program;
}

function wholeNumberAtLeast0(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}

/** A progress bar on stderr: redrawn in place on a terminal, one line per 10 % otherwise. */
function progressBar(unit: string) {
  const started = Date.now();
  const tty = process.stderr.isTTY === true;
  let lastTenth = -1;
  return {
    update({ done, total }: { done: number; total: number }) {
      const ratio = total === 0 ? 1 : done / total;
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      const line = `[${'#'.repeat(Math.round(ratio * 30)).padEnd(30, '.')}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${unit} ${secs}s`;
      if (tty) process.stderr.write(`\r${line}`);
      else if (Math.floor(ratio * 10) > lastTenth) {
        lastTenth = Math.floor(ratio * 10);
        process.stderr.write(`${line}\n`);
      }
    },
    done(message: string) {
      process.stderr.write(`${tty ? '\n' : ''}${message}\n`);
    },
  };
}

/** Runs the CLI with `shell` for `serve` and `worker`; reports errors in one line and exits 1 (2 for bad configuration). */
export async function runCli(argv: string[], shell: ProcessShell): Promise<void> {
  try {
    await buildCli(shell).parseAsync(argv);
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
