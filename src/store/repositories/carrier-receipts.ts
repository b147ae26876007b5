import { sql } from 'kysely';
import { boundCount, isPostgres, jsonIds, prepareQuery } from '../prepared.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * Receipts pushed by a named carrier (API.md §11.4, §14.1): SMPP deliver_sm, a Twilio status
 * callback, an Android phone's event. A receipt names its message by (carrier, carrier_message_id)
 * (index messages_carrier_msg_ix, migration 011); a message written before migration 011 has no
 * carrier (NULL) and is matched by its carrier id alone, as it was then.
 *
 * A receipt that comes before its message's Sent is committed is parked in
 * `carrier_receipts_pending`, and taken (deleted and applied) by the Sent commit
 * (src/domain/carrier-receipts.ts). Times: `nowSeconds` epoch seconds (DateDelivered), `now`
 * and `before` epoch ms.
 */

/** The changed message: its id and account, for its API.md §12.1 event in the same transaction. */
export type ChangedMessage = Pick<Row<'messages'>, 'id' | 'account_id'>;

const apply = prepareQuery((db, carrier: string, carrierId: string, statusId: number, errorCode: string, deliveredAt: number | null) =>
  db
    .updateTable('messages')
    .set({
      status_id: statusId,
      error_code: errorCode,
      delivered_at: deliveredAt,
      receipt_status: null,
      receipt_error: null,
      receipt_due_at: null,
    })
    .where('carrier_message_id', '=', carrierId)
    .where((eb) => eb.or([eb('carrier', '=', carrier), eb('carrier', 'is', null)]))
    .where('status_id', '=', 2)
    .returning(['id', 'account_id']),
);

/**
 * The Sent message of `carrier` with `carrierId` becomes Delivered (3, DateDelivered
 * `nowSeconds`) or Undelivered (4, ErrorCode `errorCode`). A message no longer Sent changes
 * nothing (receipts may come more than once).
 * @returns the message changed (none or one).
 */
export async function applyCarrierReceiptRow(
  db: Db,
  carrier: string,
  carrierId: string,
  statusId: 3 | 4,
  errorCode: string,
  nowSeconds: number,
): Promise<ChangedMessage[]> {
  return apply.all(db, carrier, carrierId, statusId, errorCode, statusId === 3 ? nowSeconds : null);
}

const known = prepareQuery((db, carrier: string, carrierId: string) =>
  db
    .selectFrom('messages')
    .select('id')
    .where('carrier_message_id', '=', carrierId)
    .where((eb) => eb.or([eb('carrier', '=', carrier), eb('carrier', 'is', null)]))
    .limit(boundCount(1)),
);

/** True when a message of `carrier` has this carrier id (whatever its status): its Sent is committed. */
export async function carrierMessageKnown(db: Db, carrier: string, carrierId: string): Promise<boolean> {
  return (await known.first(db, carrier, carrierId)) !== undefined;
}

/**
 * Parks a receipt whose message is not Sent yet. A second receipt for the same (carrier, id)
 * while the first is parked changes nothing (the first one stays).
 */
export async function parkReceipt(
  db: Db,
  carrier: string,
  carrierId: string,
  statusId: 3 | 4,
  errorCode: string,
  now: number,
): Promise<void> {
  await db
    .insertInto('carrier_receipts_pending')
    .values({ carrier, carrier_message_id: carrierId, status: statusId, error_code: errorCode, received_at: now })
    .onConflict((oc) => oc.columns(['carrier', 'carrier_message_id']).doNothing())
    .execute();
}

/** A parked receipt taken for its message. */
export interface ParkedReceipt {
  carrier: string;
  carrierMessageId: string;
  statusId: 3 | 4;
  errorCode: string;
}

type ParkedRow = { carrier: string; carrier_message_id: string; status: number; error_code: string };

const takeForIds = prepareQuery((db, idsJson: string) => ({
  compile: () =>
    sql`delete from carrier_receipts_pending
        where exists (select 1 from messages m
          where m.id in ${jsonIds(db, idsJson)}
            and m.carrier = carrier_receipts_pending.carrier and m.carrier_message_id = carrier_receipts_pending.carrier_message_id)
        returning carrier, carrier_message_id, status, error_code`.compile(db),
}));

const takeAny = prepareQuery((db, limit: number) => ({
  compile: () =>
    (isPostgres(db)
      ? sql`with due as materialized (
            select p.carrier, p.carrier_message_id from carrier_receipts_pending p
            where exists (select 1 from messages m where m.carrier = p.carrier and m.carrier_message_id = p.carrier_message_id)
            limit ${limit} for update of p skip locked)
          delete from carrier_receipts_pending p using due
          where p.carrier = due.carrier and p.carrier_message_id = due.carrier_message_id
          returning p.carrier, p.carrier_message_id, p.status, p.error_code`
      : sql`delete from carrier_receipts_pending
          where (carrier, carrier_message_id) in (
            select p.carrier, p.carrier_message_id from carrier_receipts_pending p
            where exists (select 1 from messages m where m.carrier = p.carrier and m.carrier_message_id = p.carrier_message_id)
            limit ${limit})
          returning carrier, carrier_message_id, status, error_code`
    ).compile(db),
}));

function parked(rows: ParkedRow[]): ParkedReceipt[] {
  return rows.map((r) => ({
    carrier: r.carrier,
    carrierMessageId: r.carrier_message_id,
    statusId: Number(r.status) === 3 ? 3 : 4,
    errorCode: r.error_code,
  }));
}

/**
 * Takes (deletes and returns) the parked receipts of the given messages (by their carrier and
 * carrier id, as just committed Sent): the caller applies them in the same transaction.
 */
export async function takeParkedReceipts(db: Db, messageIds: readonly number[]): Promise<ParkedReceipt[]> {
  if (messageIds.length === 0) return [];
  return parked((await takeForIds.all(db, JSON.stringify(messageIds))) as ParkedRow[]);
}

/**
 * Takes up to `limit` parked receipts whose message now exists (its Sent was committed by a
 * transaction that ran beside the receipt's; PostgreSQL's read committed lets the two miss each
 * other). On PostgreSQL rows another dispatcher is taking are skipped.
 */
export async function takeMatchedParkedReceipts(db: Db, limit: number): Promise<ParkedReceipt[]> {
  return parked((await takeAny.all(db, limit)) as ParkedRow[]);
}

const anyParked = prepareQuery((db) => db.selectFrom('carrier_receipts_pending').select('carrier').limit(boundCount(1)));

/** True when some receipt is parked: a read, so an idle round opens no write transaction. */
export async function hasParkedReceipts(db: Db): Promise<boolean> {
  return (await anyParked.first(db)) !== undefined;
}

/**
 * Deletes parked receipts received before `before` (epoch ms): receipts for ids no message will
 * ever have (a submit whose acceptance was lost in a crash and sent again under a new id, an SMPP
 * receipt's second id). Returns how many.
 */
export async function dropStaleParkedReceipts(db: Db, before: number): Promise<number> {
  const r = await db.deleteFrom('carrier_receipts_pending').where('received_at', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
