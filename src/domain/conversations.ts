import type { CountryCode } from 'libphonenumber-js';
import { inTransaction, type Store } from '../store/db.ts';
import * as conversations from '../store/repositories/conversations.ts';
import type { ConversationRow } from '../records/conversations.ts';
import { ValidationFailedError } from './errors.ts';
import { defineRules, validate } from './validation.ts';

/**
 * Conversations (API.md §14.4.1): `sms/conversations`, one thread per phone number the account has
 * sent to or received from, and `sms/mark-read?MobilePhone=`. The threads are kept by the store
 * (migration 017's triggers on every message insert), so every way a message enters the log
 * counts: sms/send, send-group, schedules, inbound texts, STOP/START/HELP replies, autoreplies,
 * the demo history and `msgsvc generate`.
 *
 * Choices the contract leaves open, written down here:
 * - A thread is the other party's number (`MobilePhone` of the messages), whichever of the
 *   account's numbers sent or received them: two account numbers texting one person make one
 *   thread.
 * - `ContactId` is the account's contact whose number is the thread's (contacts are unique per
 *   number in an account); `""` when there is none, also after that contact was deleted.
 * - `Unread` counts inbound messages received after the last mark-read of the thread (all of them
 *   when it was never marked), in the order the store committed them. Outbound messages never
 *   count and never clear it; only `sms/mark-read` does.
 * - `sms/mark-read` of a number the account has no conversation with answers 204 and changes
 *   nothing (as marking an already read thread does): the call is idempotent, the number is
 *   valid, and "nothing unread there" is true. A 404 would make a client race the first message.
 * - The list's total (X-Pagination-Total-Count) is the trigger-kept count of the account's threads.
 * - `Number` (API.md §17) is the account number of the thread's newest message, inbound or
 *   outbound: the number a reply goes from under a sender pool (the sticky number), while the
 *   thread is recent.
 */

const MARK_READ_RULES = defineRules([
  { field: 'MobilePhone', rule: 'required' },
  { field: 'MobilePhone', rule: 'phone' },
]);

/**
 * The sms/conversations list (API.md §14.4.1), newest thread first (its last message's Id
 * descending): its total and a page fetcher, for ctx.paginate.
 */
export async function conversationList(
  store: Store,
  accountId: number,
): Promise<{ total: number; fetch: (limit: number, offset: number) => Promise<ConversationRow[]> }> {
  const total = await conversations.countConversations(store.db, accountId);
  return { total, fetch: (limit, offset) => conversations.listConversations(store.db, accountId, limit, offset) };
}

/**
 * `sms/mark-read?MobilePhone=` (API.md §14.4.1): the account's thread with that number has no
 * unread message any more, until the next inbound one. `mobilePhone` is read like
 * `contacts/find?number=` (any common format, national numbers in `region`). A number with no
 * conversation: nothing changes (204 all the same).
 * @throws ValidationFailedError (422) `Mobile Phone cannot be blank.` (missing or blank) or
 *   `Mobile Phone is invalid.` (not a phone number, or sent as a list).
 */
export async function markConversationRead(store: Store, accountId: number, mobilePhone: unknown, region: CountryCode): Promise<void> {
  const checked = validate({ MobilePhone: mobilePhone }, MARK_READ_RULES, { region });
  if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
  // One transaction: its audit entry commits with it (API.md §15.5).
  await inTransaction(store, (tx) => conversations.markConversationRead(tx, accountId, checked.values.MobilePhone!.digits));
}
