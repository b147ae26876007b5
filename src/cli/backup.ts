/**
 * `msgsvc backup --to FILE` and `msgsvc restore --from FILE`: the SQLite database named by
 * DATABASE_URL, copied while it serves and written back while nothing uses it
 * (src/store/backup.ts; docs/guides/backup.md). PostgreSQL has its own tools, pg_dump and
 * pg_restore: both commands say so and exit 1.
 */
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import { BackupError, backupSqlite, restoreSqlite } from '../store/backup.ts';
import { DatabaseBeingRestoredError } from '../store/in-use.ts';
import { CliError, out } from './common.ts';

const GUIDE = 'docs/guides/backup.md';

/** The SQLite file of the configuration. @throws CliError for PostgreSQL (pointing at `tool`) or a database with no file. */
function sqlitePath(config: Config, command: string, tool: string): string {
  if (config.database.kind !== 'sqlite') {
    throw new CliError(`${command} works on a SQLite database; DATABASE_URL names PostgreSQL: use ${tool} (${GUIDE}, "PostgreSQL")`);
  }
  const path = config.database.path;
  if (path === ':memory:' || path.startsWith('file:')) throw new CliError(`${command} needs a database file, not ${path}`);
  return path;
}

/** Runs `fn`, turning the errors the user can act on into CliError (`msgsvc: …`, exit 1). */
async function reported<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof BackupError || err instanceof DatabaseBeingRestoredError) throw new CliError(err.message);
    throw err;
  }
}

/** Adds `backup` and `restore` to `program`; `config` reads the configuration when a command runs. */
export function addBackupCommands(program: Command, config: () => Config): void {
  program
    .command('backup')
    .description(
      'copy the SQLite database while it serves (the online backup API) and check the copy (PRAGMA integrity_check); prints a JSON report',
    )
    .requiredOption('--to <file>', 'the backup file; an existing one is replaced only by a copy that passed the check')
    .action(async (opts: { to: string }) => {
      const path = sqlitePath(config(), 'msgsvc backup', 'pg_dump -Fc -d "$DATABASE_URL" -f msgsvc.dump');
      const report = await reported(() => backupSqlite(path, opts.to));
      out({ backup: report.file, bytes: report.bytes, pages: report.pages, seconds: Math.round(report.seconds * 100) / 100 });
    });

  program
    .command('restore')
    .description(
      'replace the SQLite database with a backup (checked first: integrity_check, msgsvc migrations); refused while any process uses the database',
    )
    .requiredOption('--from <file>', 'the backup file (made by msgsvc backup)')
    .action(async (opts: { from: string }) => {
      const path = sqlitePath(config(), 'msgsvc restore', 'pg_restore into a fresh database');
      const report = await reported(() => restoreSqlite(path, opts.from));
      out({
        restored: report.database,
        from: report.from,
        bytes: report.bytes,
        pendingMigrations: report.pendingMigrations,
        seconds: Math.round(report.seconds * 100) / 100,
      });
    });
}
