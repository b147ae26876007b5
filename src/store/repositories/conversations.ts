import { sql } from 'kysely';
import { boundCount, prepareQuery } from '../prepared.ts';
import { MESSAGE_COLUMNS } from '../../records/messages.ts';
import type { ConversationRow } from '../../records/conversations.ts';
import type { Db } from '../types.ts';

/**
 * The SQL of conversations (API.md §14.4.1 `sms/conversations`, `sms/mark-read`). The rows are kept
 * by migration 017's triggers on INSERT into messages; this module only reads them and clears
 * `unread`. Every query is scoped to the account.
 */

const total = prepareQuery((db, accountId: number) =>
  db.selectFrom('list_totals').select('conversations').where('account_id', '=', accountId),
);

/** How many conversations the account has (the trigger-kept total: one row read). */
export async function countConversations(db: Db, accountId: number): Promise<number> {
  return Number((await total.first(db, accountId))?.conversations ?? 0);
}

const MESSAGE_REFS = MESSAGE_COLUMNS.map((c) => `m.${c}` as const);

/**
 * A page of the account's conversations, newest thread first: one backward range of
 * conversations_recent_ix, then per row its newest message (primary key) and the account's contact
 * with that number (the (account_id, number_e164) unique index).
 */
const page = prepareQuery((db, accountId: number, limit: number, offset: number) =>
  db
    .selectFrom('conversations as c')
    .innerJoin('messages as m', (j) => j.onRef('m.id', '=', 'c.last_message_id').onRef('m.account_id', '=', 'c.account_id'))
    .leftJoin('contacts as k', (j) =>
      j.onRef('k.account_id', '=', 'c.account_id').on('k.number_e164', '=', sql<string>`'+' || ${sql.ref('c.mobile_phone')}`),
    )
    .select([...MESSAGE_REFS, 'c.unread', 'k.id as contact_id'])
    .where('c.account_id', '=', accountId)
    .orderBy('c.last_message_id', 'desc')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

/** One page of the account's conversations by their newest message's id, descending: `limit` rows from `offset`. */
export async function listConversations(db: Db, accountId: number, limit: number, offset: number): Promise<ConversationRow[]> {
  return page.all(db, accountId, limit, offset);
}

const markRead = prepareQuery((db, accountId: number, mobilePhone: string) =>
  db
    .updateTable('conversations')
    .set((eb) => ({ unread: 0, read_up_to_id: eb.ref('last_message_id') }))
    .where('account_id', '=', accountId)
    .where('mobile_phone', '=', mobilePhone),
);

/**
 * Marks the account's conversation with `mobilePhone` (digits) read: `unread` 0, `read_up_to_id`
 * its newest message id. One statement: on PostgreSQL it waits for a message insert that holds the
 * row, so an inbound message counts either before the mark (cleared) or after it (1).
 * @returns true when the account has that conversation.
 */
export async function markConversationRead(db: Db, accountId: number, mobilePhone: string): Promise<boolean> {
  return (await markRead.run(db, accountId, mobilePhone)) > 0;
}
