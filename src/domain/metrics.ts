import type { Store } from '../store/db.ts';
import * as metrics from '../store/repositories/metrics.ts';

/** What GET /metrics reports about the stored messages (docs/API.md §13), all accounts. */

/** Messages in the log per status id (a Map of status id → count; a status with none is absent). */
export function messageCountsByStatus(store: Store): Promise<Map<number, number>> {
  return metrics.countMessagesByStatus(store.db);
}

/** The dispatcher's queue: Queued messages (`depth`) and the created_at (epoch seconds) of the oldest, null when none. */
export function dispatchQueue(store: Store): Promise<{ depth: number; oldest: number | null }> {
  return metrics.queuedMessages(store.db);
}
