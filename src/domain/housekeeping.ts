import type { Store } from '../store/db.ts';
import * as pool from '../store/repositories/sender-pool.ts';
import * as sessions from '../store/repositories/sessions.ts';
import * as users from '../store/repositories/users.ts';
import { purgeAuditLog } from './audit.ts';
import { SESSION_IDLE_SECONDS } from './credentials.ts';
import { LOCKOUT_WINDOW_SECONDS } from './sign-in.ts';

/**
 * The hourly clean-up of what §15 keeps only for a while (docs/API.md §15): audit entries older
 * than MSGSVC_AUDIT_DAYS, sessions past their limits (the operator's too), sign-in failures past the lockout's window,
 * passkey challenges never answered, and the sender pool's counters of past days and months
 * (docs/API.md §17).
 * @param now epoch seconds.
 * @returns how many audit entries were deleted.
 */
export async function purgeExpired(store: Store, now: number, auditDays: number): Promise<number> {
  const audit = await purgeAuditLog(store, now, auditDays);
  await sessions.purgeSessions(store.db, now, SESSION_IDLE_SECONDS);
  await sessions.purgeOperatorSessions(store.db, now, SESSION_IDLE_SECONDS);
  await users.purgeFailures(store.db, now - LOCKOUT_WINDOW_SECONDS);
  await users.purgeChallenges(store.db, now);
  // A number's counters (docs/API.md §17) of days and months that are over in every time zone.
  const utc = (seconds: number) => new Date(seconds * 1000).toISOString();
  await pool.purgeCounters(store.db, utc(now - 3 * 86_400).slice(0, 10), utc(now - 35 * 86_400).slice(0, 7));
  return audit;
}
