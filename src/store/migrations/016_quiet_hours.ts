import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Account settings and quiet hours (docs/API.md §14.3.5).
 *
 * `account_settings`: at most one row per account, written by the first `PUT /v1/account/settings`
 * (an account without a row has the defaults: no quiet hours, the service's zone). `quiet_start`
 * and `quiet_end` are `HH:MM` (24-hour) or both NULL (no quiet hours: a check keeps them together
 * and different); `time_zone` is an IANA name, NULL meaning "the service's MSGSVC_TIMEZONE", so
 * that a change of that setting moves every account that never chose a zone. Gone with the
 * account (cascade).
 *
 * `messages.quiet_state`: 0 a message quiet hours may hold; 1 held by quiet hours now (Queued, due
 * when they end: what `PUT /v1/account/settings` makes due at once); 2 never held (a keyword's
 * autoreply; the STOP, START and HELP replies are recognised by `opt_out_exempt`). Held messages
 * are found through `messages_account_status_ix` (account, Queued).
 */
export function quietHoursMigration(dialect: Dialect) {
  void dialect;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('account_settings')
        .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
        .addColumn('quiet_start', 'text')
        .addColumn('quiet_end', 'text')
        .addColumn('time_zone', 'text')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addCheckConstraint(
          'account_settings_quiet_ck',
          sql`(quiet_start is null and quiet_end is null) or (quiet_start is not null and quiet_end is not null and quiet_start <> quiet_end)`,
        )
        .execute();
      await db.schema
        .alterTable('messages')
        .addColumn('quiet_state', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
