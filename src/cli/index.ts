import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, type Config, type ConfigSource } from '../config.ts';
import { changeAccountCredits, createAccount, numberDigits, viewAccount, type AccountAdminDeps } from '../domain/account-admin.ts';
import { createLabelledKey, setCredits } from '../domain/admin-accounts.ts';
import { addServiceNumber } from '../domain/admin-numbers.ts';
import { createOperatorKey, listOperatorKeys, revokeOperatorKey } from '../domain/operators.ts';
import { addDemoCommand } from './demo.ts';
import { addBackupCommands } from './backup.ts';
import { CliError, out, withStore } from './common.ts';
import { generateAccount } from '../domain/generate.ts';
import { importContacts } from '../domain/contacts-import.ts';
import { NotFoundError, ValidationFailedError } from '../domain/errors.ts';
import { createReadStream, statSync } from 'node:fs';
import { NUMBER_STATUSES } from '../records/statuses.ts';
import { createTimeFormat, nowSeconds, systemClock } from '../lib/time.ts';
import { hashToken } from '../domain/tokens.ts';
import { createRequire } from 'node:module';
import type { Store } from '../store/db.ts';
import * as accounts from '../store/repositories/accounts.ts';

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

/**
 * What the account rules need from the command line (src/domain/account-admin.ts): the same
 * functions the operator's `/admin/v1` calls (docs/API.md §16.4), so the two never disagree.
 */
function adminDeps(config: Config, store: Store): AccountAdminDeps {
  return {
    store,
    clock: systemClock,
    timeZone: config.timeZone,
    // Where invite links point (no command invites anyone today): MSGSVC_PUBLIC_URL, else the server's own address.
    baseUrl: config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`,
    region: config.defaultRegion,
  };
}

/** The account `id`, which must exist. @throws CliError `no account with id {id}`. */
async function requireAccount(deps: AccountAdminDeps, id: number) {
  try {
    return await viewAccount(deps, undefined, String(id));
  } catch (err) {
    if (err instanceof NotFoundError) throw new CliError(`no account with id ${id}`);
    throw err;
  }
}

/** The messages of a rule the command broke, as one line. */
function ruleMessages(err: ValidationFailedError): string {
  return err.errors.map((e) => e.message).join(' ');
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
    .description('create a top-level account, as POST /admin/v1/accounts/create does; prints {"id":…,"name":…}')
    .requiredOption('--name <name>', 'account name (1 to 255 characters)')
    .option('--max-per-second <n>', 'MaxPerSecond: messages to carriers per second, 0 for no limit of its own', wholeNumberAtLeast0)
    .option('--max-per-day <n>', 'MaxPerDay: messages queued per day, 0 for no limit of its own', wholeNumberAtLeast0)
    .action(async (opts: { name: string; maxPerSecond?: number; maxPerDay?: number }) => {
      const cfg = config();
      const row = await withStore(cfg, async (store) => {
        try {
          return await createAccount(adminDeps(cfg, store), null, {
            Name: opts.name,
            ...(opts.maxPerSecond !== undefined ? { MaxPerSecond: opts.maxPerSecond } : {}),
            ...(opts.maxPerDay !== undefined ? { MaxPerDay: opts.maxPerDay } : {}),
          });
        } catch (err) {
          if (err instanceof ValidationFailedError) throw new CliError(ruleMessages(err));
          throw err;
        }
      });
      out({ id: row.id, name: row.name });
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
      const cfg = config();
      const { secret, id } = await withStore(cfg, async (store) => {
        const deps = adminDeps(cfg, store);
        const account = await requireAccount(deps, opts.account);
        if (account.status === 'closed') throw new CliError(`account ${opts.account} is closed`);
        try {
          // The rules of POST /admin/v1/accounts/keys (createAccountKey), with every scope.
          return await createLabelledKey(deps, opts.account, name, opts.label);
        } catch (err) {
          if (err instanceof ValidationFailedError) throw new CliError(ruleMessages(err));
          throw err;
        }
      });
      process.stderr.write(`token id ${id} for account ${opts.account}; store it now, it is not shown again\n`);
      out(secret);
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
      .description(
        mode === 'set'
          ? 'set the balance (one adjustment entry of the difference)'
          : 'add to the balance (negative subtracts), as POST /admin/v1/accounts/credits does: a topup or adjustment entry',
      )
      .requiredOption('--account <id>', 'account id', positiveInt)
      .requiredOption('--amount <n>', 'credits', wholeNumber)
      .option('--note <text>', "the ledger entry's Note (at most 255 characters)", `msgsvc credits ${mode}`)
      .action(async (opts: { account: number; amount: number; note: string }) => {
        const cfg = config();
        const balance = await withStore(cfg, async (store) => {
          const deps = adminDeps(cfg, store);
          const account = await requireAccount(deps, opts.account);
          const available = account.available_credits;
          // Keep AvailableCredits an exact integer (JSON and the bigint column), never below zero.
          const next = mode === 'set' ? opts.amount : available + opts.amount;
          const refuse = (before: number, after: number) =>
            new CliError(
              Number.isSafeInteger(after)
                ? `the balance would be ${after}: AvailableCredits cannot go below zero (available: ${before})`
                : `the balance would be ${after}, beyond ±${Number.MAX_SAFE_INTEGER}`,
            );
          if (!Number.isSafeInteger(next) || next < 0) throw refuse(available, next);
          if (account.status === 'closed') throw new CliError(`account ${opts.account} is closed`);
          if (mode === 'add' && opts.amount === 0) return available;
          try {
            const changed =
              mode === 'set'
                ? await setCredits(deps, opts.account, opts.amount, opts.note)
                : // The very rules of POST /admin/v1/accounts/credits.
                  await changeAccountCredits(deps, undefined, String(opts.account), { Amount: opts.amount, Note: opts.note });
            return changed.available_credits;
          } catch (err) {
            if (!(err instanceof ValidationFailedError)) throw err;
            // A debit raced this command: say so with the balance it met.
            const now = (await requireAccount(deps, opts.account)).available_credits;
            if (mode === 'add' && now + opts.amount < 0) throw refuse(now, now + opts.amount);
            throw new CliError(ruleMessages(err));
          }
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
      const row = await withStore(cfg, async (store) => {
        const deps = adminDeps(cfg, store);
        const account = await requireAccount(deps, opts.account);
        if (account.status === 'closed') throw new CliError(`account ${opts.account} is closed`);
        try {
          // The rules of POST /admin/v1/numbers/create (src/domain/admin-numbers.ts).
          return await addServiceNumber(deps, { Number: opts.number, AccountId: opts.account, Status_Id: status });
        } catch (err) {
          if (!(err instanceof ValidationFailedError)) throw err;
          const failed = err.errors[0]!;
          if (failed.field === 'Number' && failed.message === 'Number is invalid.')
            throw new CliError(`not a short code or phone number: ${opts.number}`);
          if (failed.field === 'Number' && failed.message.startsWith('The combination '))
            throw new CliError(
              `account ${opts.account} already has the number ${numberDigits(opts.number, cfg.defaultRegion) ?? opts.number}`,
            );
          throw new CliError(ruleMessages(err));
        }
      });
      out({ Number: row.number, Status_Id: row.status_id, Status_Description: NUMBER_STATUSES[row.status_id] });
    });

  const operatorsCmd = program.command('operators').description('manage operator keys, for /admin/v1 (docs/API.md §16.4)');
  operatorsCmd
    .command('create')
    .description('make an operator key; prints its secret once (only its hash is stored)')
    .requiredOption('--name <text>', "the key's Name (1 to 64 characters)")
    .action(async (opts: { name: string }) => {
      const { row, secret } = await withStore(config(), async (store) => {
        try {
          return await createOperatorKey({ store, clock: systemClock }, opts.name);
        } catch (err) {
          if (err instanceof ValidationFailedError) throw new CliError(`--name: ${ruleMessages(err)}`);
          throw err;
        }
      });
      process.stderr.write(`operator key id ${row.id} (${row.name}); store it now, it is not shown again\n`);
      out(secret);
    });
  operatorsCmd
    .command('list')
    .description('list the operator keys (never their secrets): a JSON array')
    .action(async () => {
      const cfg = config();
      const time = createTimeFormat(cfg.timeZone);
      const rows = await withStore(cfg, (store) => listOperatorKeys(store));
      out(
        rows.map((r) => ({
          Id: r.id,
          Name: r.name,
          Prefix: r.prefix,
          DateCreated: time.dateTime(r.created_at),
          DateLastUsed: r.last_used_at === null ? null : time.dateTime(r.last_used_at),
          DateRevoked: r.revoked_at === null ? null : time.dateTime(r.revoked_at),
        })),
      );
    });
  operatorsCmd
    .command('revoke')
    .description('revoke an operator key by its id: it stops working at once')
    .requiredOption('--id <id>', 'operator key id (as printed by operators create and list)', positiveInt)
    .action(async (opts: { id: number }) => {
      const revoked = await withStore(config(), (store) => revokeOperatorKey({ store, clock: systemClock }, opts.id));
      if (!revoked) throw new CliError(`no live operator key with id ${opts.id}`);
      out('operator key revoked');
    });

  addDemoCommand(program, () => config());
  addBackupCommands(program, () => config());

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
        await requireAccount(adminDeps(cfg, store), opts.account);
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
