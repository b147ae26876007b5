import { randomBytes } from 'node:crypto';
import { sql, type Updateable } from 'kysely';
import { boundCount, prepareQuery } from '../prepared.ts';
import { ERASED, erasedValues, scrubJson, type ErasedPerson, type PersonalTable } from '../personal-data.ts';
import type { Database } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * The writes of `contacts/erase` (docs/API.md §10.2.1): one step per table of PERSONAL_DATA
 * (src/store/personal-data.ts), run in the caller's transaction, every one scoped to the account.
 * What each step does to each column is what the list says; the values written over a column
 * (`erased`, `""`) are read from it.
 */

/** Whose data, and when. */
export interface ErasureTarget {
  accountId: number;
  /** E.164 digits without `+` (what messages, conversations and contacts store). */
  digits: string;
  /** E.164 with `+` (contacts' lookup key). */
  e164: string;
  /** SHA-256 (lowercase hex) of `digits`: what the consent ledger keeps. */
  sha256: string;
  /** Epoch seconds. */
  now: number;
  /** Epoch ms (the dispatcher's leases). */
  nowMs: number;
  /** `text` with every writing of the number replaced by `erased`. */
  redact: (text: string) => string;
}

/** A Queued message ended Rejected by the erasure: what its refund and its event need. */
export interface RejectedMessage {
  id: number;
  account_id: number;
  batch_id: number | null;
  credits: number;
}

/** What the erasure did, for the caller's refunds, events and audit entry. */
export interface ErasureResult {
  /** The account's contacts with the number, now deleted (one at most). */
  contactIds: number[];
  /** Queued messages to the number that no dispatcher held: now Rejected, ErrorCode `ERASED`. */
  rejected: RejectedMessage[];
  /** Scheduled messages to the number, now deleted: each one's id and reserved credits. */
  cancelled: { id: number; reserved: number }[];
  /** How many messages of the log were erased. */
  messages: number;
}

interface State extends ErasureResult {
  messageIds: Set<number>;
  /** The erased contacts' own words (names, email, city, zip), for the previews they were merged into. */
  contactTexts: string[];
}

type Step = (tx: Db, t: ErasureTarget, state: State) => Promise<void>;

/** The SET of an UPDATE that writes `erased` and `""` over the table's columns, as PERSONAL_DATA says. */
function erasedSet<T extends PersonalTable>(table: T): Updateable<Database[T]> {
  return erasedValues(table) as Updateable<Database[T]>;
}

/** A page of rows read by a key ascending, for steps that read and rewrite in JS. */
const PAGE = 500;

/** The person as the JSON scrubber sees them. */
function personOf(t: ErasureTarget, state: State): ErasedPerson {
  return {
    digits: t.digits,
    contactIds: new Set(state.contactIds),
    messageIds: state.messageIds,
    contactTexts: state.contactTexts,
    redact: t.redact,
  };
}

/** `text` scrubbed as JSON (a text that is no JSON: redacted as text); undefined when unchanged. */
function scrubbedText(text: string, person: ErasedPerson): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    const redacted = person.redact(text);
    return redacted === text ? undefined : redacted;
  }
  const scrubbed = scrubJson(value, person);
  return scrubbed === value ? undefined : JSON.stringify(scrubbed);
}

/**
 * The steps, one per table of PERSONAL_DATA (the type requires each), in the order they run:
 * the consent ledger is kept before the contact goes, the links of the person's messages are
 * found (by their number) before the messages are erased, and the kept JSON is scrubbed last,
 * when every erased contact and message id is known.
 */
const STEPS: { readonly [T in PersonalTable]: Step } = {
  async contact_consent(tx, t, s) {
    if (s.contactIds.length === 0) return;
    await tx
      .insertInto('erased_consent')
      .columns(['id', 'account_id', 'number_sha256', 'opted_out', 'source', 'detail', 'carrier', 'created_at', 'erased_at'])
      .expression(
        tx
          .selectFrom('contact_consent')
          .select([
            'id',
            'account_id',
            sql<string>`cast(${t.sha256} as text)`.as('number_sha256'),
            'opted_out',
            'source',
            'detail',
            'carrier',
            'created_at',
            sql<number>`cast(${t.now} as bigint)`.as('erased_at'),
          ])
          .where('account_id', '=', t.accountId)
          .where('contact_id', 'in', s.contactIds)
          .orderBy('id'),
      )
      .execute();
  },
  // Written by contact_consent above; kept.
  erased_consent: () => Promise.resolve(),
  async custom_field_entries(tx, t, s) {
    if (s.contactIds.length === 0) return;
    await tx.deleteFrom('custom_field_entries').where('account_id', '=', t.accountId).where('contact_id', 'in', s.contactIds).execute();
  },
  async group_members(tx, t, s) {
    if (s.contactIds.length === 0) return;
    await tx.deleteFrom('group_members').where('account_id', '=', t.accountId).where('contact_id', 'in', s.contactIds).execute();
  },
  async contacts(tx, t, s) {
    // Its consent entries go with it (the foreign key cascades), kept above.
    if (s.contactIds.length === 0) return;
    await tx.deleteFrom('contacts').where('account_id', '=', t.accountId).where('id', 'in', s.contactIds).execute();
  },
  async scheduled_messages(tx, t, s) {
    const rows = await tx
      .deleteFrom('scheduled_messages')
      .where('account_id', '=', t.accountId)
      .where('mobile_phone', '=', t.digits)
      .returning(['id', 'reserved_credits'])
      .execute();
    s.cancelled = rows.map((r) => ({ id: Number(r.id), reserved: Number(r.reserved_credits ?? 0) }));
  },
  async link_clicks(tx, t) {
    await tx
      .updateTable('link_clicks')
      .set(erasedSet('link_clicks'))
      .where('account_id', '=', t.accountId)
      .where('link_id', 'in', (eb) =>
        eb
          .selectFrom('message_links')
          .select('message_links.id')
          .where('message_links.account_id', '=', t.accountId)
          .where('message_links.message_id', 'in', (e2) =>
            e2
              .selectFrom('messages')
              .select('messages.id')
              .where('messages.account_id', '=', t.accountId)
              .where('messages.mobile_phone', '=', t.digits),
          ),
      )
      .execute();
  },
  async message_links(tx, t) {
    await tx
      .updateTable('message_links')
      .set(erasedSet('message_links'))
      .where('account_id', '=', t.accountId)
      .where('message_id', 'in', (eb) =>
        eb
          .selectFrom('messages')
          .select('messages.id')
          .where('messages.account_id', '=', t.accountId)
          .where('messages.mobile_phone', '=', t.digits),
      )
      .execute();
  },
  async messages(tx, t, s) {
    // A Queued message to the person that no dispatcher holds goes nowhere now: Rejected and
    // refunded (by the caller), as a closed account's are. One a dispatcher holds keeps its lease
    // and ends as the carrier answers.
    const rejected = await tx
      .updateTable('messages')
      .set({ status_id: 6, error_code: 'ERASED', due_at: null, lease_token: null })
      .where('account_id', '=', t.accountId)
      .where('mobile_phone', '=', t.digits)
      .where('direction', '=', 1)
      .where('status_id', '=', 1)
      .where((eb) => eb.or([eb('lease_token', 'is', null), eb('due_at', '<=', t.nowMs)]))
      .returning(['id', 'account_id', 'batch_id', 'credits'])
      .execute();
    s.rejected = rejected.map((r) => ({
      id: Number(r.id),
      account_id: Number(r.account_id),
      batch_id: r.batch_id === null ? null : Number(r.batch_id),
      credits: Number(r.credits),
    }));
    const erased = await tx
      .updateTable('messages')
      .set(erasedSet('messages'))
      .where('account_id', '=', t.accountId)
      .where('mobile_phone', '=', t.digits)
      .returning('id')
      .execute();
    for (const r of erased) s.messageIds.add(Number(r.id));
    s.messages = erased.length;
  },
  async conversations(tx, t) {
    const mine = await tx
      .selectFrom('conversations')
      .select(['last_message_id', 'unread', 'read_up_to_id'])
      .where('account_id', '=', t.accountId)
      .where('mobile_phone', '=', t.digits)
      .executeTakeFirst();
    if (!mine) return;
    const thread = await tx
      .selectFrom('conversations')
      .select(['last_message_id', 'unread', 'read_up_to_id'])
      .where('account_id', '=', t.accountId)
      .where('mobile_phone', '=', ERASED)
      .executeTakeFirst();
    if (!thread) {
      await tx
        .updateTable('conversations')
        .set({ mobile_phone: ERASED })
        .where('account_id', '=', t.accountId)
        .where('mobile_phone', '=', t.digits)
        .execute();
      return;
    }
    // The account's `erased` thread takes this one in: one thread less.
    await tx
      .updateTable('conversations')
      .set({
        last_message_id: Math.max(Number(thread.last_message_id), Number(mine.last_message_id)),
        unread: Number(thread.unread) + Number(mine.unread),
        read_up_to_id: Math.max(Number(thread.read_up_to_id), Number(mine.read_up_to_id)),
      })
      .where('account_id', '=', t.accountId)
      .where('mobile_phone', '=', ERASED)
      .execute();
    await tx.deleteFrom('conversations').where('account_id', '=', t.accountId).where('mobile_phone', '=', t.digits).execute();
    // The trigger-kept count of threads (migration 017 counts inserts only), counted again.
    await tx
      .updateTable('list_totals')
      .set((eb) => ({
        conversations: eb
          .selectFrom('conversations')
          .select((e) => e.fn.countAll<number>().as('n'))
          .where('conversations.account_id', '=', t.accountId),
      }))
      .where('account_id', '=', t.accountId)
      .execute();
  },
  async number_month_recipients(tx, t) {
    const rows = await tx
      .selectFrom('number_month_recipients')
      .select(['number', 'month'])
      .where('account_id', '=', t.accountId)
      .where('mobile_phone', '=', t.digits)
      .execute();
    for (const r of rows) {
      await tx
        .updateTable('number_month_recipients')
        .set({ mobile_phone: `${ERASED}:${randomBytes(8).toString('hex')}` })
        .where('account_id', '=', t.accountId)
        .where('number', '=', r.number)
        .where('month', '=', r.month)
        .where('mobile_phone', '=', t.digits)
        .execute();
    }
  },
  // A send-group's text as the account wrote it: kept (src/store/personal-data.ts says why).
  batches: () => Promise.resolve(),
  async webhook_deliveries(tx, t, s) {
    // Every event about the person names their number (a message's, a contact's, a scheduled
    // message's row), but a link's click, which names its message.
    const person = personOf(t, s);
    for (let after = 0; ;) {
      const rows = await tx
        .selectFrom('webhook_deliveries')
        .select(['id', 'payload'])
        .where('webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('webhooks.id').where('webhooks.account_id', '=', t.accountId))
        .where('account_id', '=', t.accountId)
        .where('id', '>', after)
        .where((eb) => eb.or([eb('payload', 'like', `%${t.digits}%`), eb('event', 'like', 'link.%')]))
        .orderBy('id')
        .limit(boundCount(PAGE))
        .execute();
      for (const r of rows) {
        const payload = scrubbedText(r.payload, person);
        if (payload !== undefined) await tx.updateTable('webhook_deliveries').set({ payload }).where('id', '=', r.id).execute();
      }
      if (rows.length < PAGE) return;
      after = Number(rows[rows.length - 1]!.id);
    }
  },
  async idempotency_keys(tx, t, s) {
    // Kept 24 hours: every kept response of the account is read (a contact's custom field value
    // names no number, only the contact's id).
    const person = personOf(t, s);
    for (let after: string | undefined; ;) {
      let q = tx
        .selectFrom('idempotency_keys')
        .select(['key', 'response_body'])
        .where('account_id', '=', t.accountId)
        .orderBy('key')
        .limit(boundCount(PAGE));
      if (after !== undefined) q = q.where('key', '>', after);
      const rows = await q.execute();
      for (const r of rows) {
        if (t.redact(r.key) !== r.key) {
          await tx.deleteFrom('idempotency_keys').where('account_id', '=', t.accountId).where('key', '=', r.key).execute();
          continue;
        }
        const body = r.response_body === null ? undefined : scrubbedText(r.response_body, person);
        if (body !== undefined)
          await tx
            .updateTable('idempotency_keys')
            .set({ response_body: body })
            .where('account_id', '=', t.accountId)
            .where('key', '=', r.key)
            .execute();
      }
      if (rows.length < PAGE) return;
      after = rows[rows.length - 1]!.key;
    }
  },
  async audit_log(tx, t) {
    // Any writing of a number ends with its last two digits together: only entries holding them are read.
    const tail = `%${t.digits.slice(-2)}%`;
    for (let after = 0; ;) {
      const rows = await tx
        .selectFrom('audit_log')
        .select(['id', 'object_id', 'request_id'])
        .where('account_id', '=', t.accountId)
        .where('id', '>', after)
        .where((eb) => eb.or([eb('object_id', 'like', tail), eb('request_id', 'like', tail)]))
        .orderBy('id')
        .limit(boundCount(PAGE))
        .execute();
      for (const r of rows) {
        const objectId = t.redact(r.object_id);
        const requestId = t.redact(r.request_id);
        if (objectId !== r.object_id || requestId !== r.request_id)
          await tx.updateTable('audit_log').set({ object_id: objectId, request_id: requestId }).where('id', '=', r.id).execute();
      }
      if (rows.length < PAGE) return;
      after = Number(rows[rows.length - 1]!.id);
    }
  },
};

/**
 * Erases the person with this number from the account (docs/API.md §10.2.1), in `tx`: every step
 * of STEPS in order. The caller holds the account's balance row (lockCredits) and refunds what
 * the result says, emits the events of the rejected messages, and commits.
 */
export async function eraseNumber(tx: Db, t: ErasureTarget): Promise<ErasureResult> {
  const contacts = await tx
    .selectFrom('contacts')
    .select(['id', 'first_name', 'last_name', 'email', 'city', 'zip'])
    .where('account_id', '=', t.accountId)
    .where('number_e164', '=', t.e164)
    .orderBy('id')
    .execute();
  // Words of 3 characters or more: a shorter one would blank previews of anyone.
  const contactTexts = contacts.flatMap((c) =>
    [c.first_name, c.last_name, c.email, c.city, c.zip].map((v) => v.trim()).filter((v) => v.length >= 3),
  );
  const state: State = {
    contactIds: contacts.map((c) => Number(c.id)),
    rejected: [],
    cancelled: [],
    messages: 0,
    messageIds: new Set(),
    contactTexts,
  };
  for (const step of Object.values(STEPS)) await step(tx, t, state);
  return { contactIds: state.contactIds, rejected: state.rejected, cancelled: state.cancelled, messages: state.messages };
}

/** The tables STEPS erases, in the order it does (for the tests). */
export const ERASURE_ORDER = Object.keys(STEPS) as PersonalTable[];

const latestErased = prepareQuery((db, accountId: number, sha256: string) =>
  db
    .selectFrom('erased_consent')
    .select('opted_out')
    .where('account_id', '=', accountId)
    .where('number_sha256', '=', sha256)
    .orderBy('id', 'desc')
    .limit(boundCount(1)),
);

/**
 * Whether the newest consent entry kept for an erased number (by its SHA-256, see
 * src/domain/erasure.ts numberSha256) says opted out: a number erased while opted out stays
 * suppressed for sms/send (docs/API.md §10.2.1). False when none is kept.
 */
export async function erasedOptedOut(db: Db, accountId: number, sha256: string): Promise<boolean> {
  const row = await latestErased.first(db, accountId, sha256);
  return Number(row?.opted_out ?? 0) === 1;
}
