/**
 * Shared pieces of the sms-*.test.ts and dispatcher suites (API.md §10.6, §11.2): Message and
 * Batch records built from the raw database rows and API.md's tables (never from src's
 * mappers), a dispatcher on a manual clock over a test app's store, and small setters for
 * balances, opt-outs and number statuses.
 */
import type { TestApp } from './app.ts';
import { call, fmtTime } from './operations.ts';
import { multipart, pngImage } from './images.ts';
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../src/domain/demo.ts';
import { createManualClock, systemClock, type ManualClock } from '../../src/lib/time.ts';
import { Dispatcher, type DispatcherOptions } from '../../src/dispatch/dispatcher.ts';
import { createSandboxCarrier, type SandboxCarrier } from '../../src/dispatch/sandbox.ts';
import type { Carrier } from '../../src/dispatch/carrier.ts';
import { inTransaction } from '../../src/store/db.ts';
import { changeCredits } from '../../src/store/repositories/accounts.ts';

/** API.md §10.6 status table. */
export const LOG_STATUS: Record<number, string> = {
  1: 'Queued',
  2: 'Sent',
  3: 'Delivered',
  4: 'Undelivered',
  5: 'Failed',
  6: 'Rejected',
  7: 'Received',
};
const TYPES: Record<number, string> = { 1: 'SMS', 2: 'MMS' };

/** The Message record of a stored message (API.md §10.6 field order). */
export async function messageFromDb(ctx: TestApp, id: number, tz = 'UTC') {
  const r = await ctx.store.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return {
    Id: r.id,
    Direction: r.direction === 1 ? 'Outbound' : 'Inbound',
    Number: r.number,
    MobilePhone: r.mobile_phone,
    Message: r.message,
    Type_Id: r.type_id,
    Type_Description: TYPES[r.type_id]!,
    Status_Id: r.status_id,
    Status_Description: LOG_STATUS[r.status_id]!,
    Segments: r.segments,
    Credits: Number(r.credits),
    BatchId: r.batch_id ?? '',
    ScheduledMessageId: r.scheduled_message_id ?? '',
    ErrorCode: r.error_code,
    DateCreated: fmtTime(Number(r.created_at), tz),
    DateSent: r.sent_at === null ? null : fmtTime(Number(r.sent_at), tz),
    DateDelivered: r.delivered_at === null ? null : fmtTime(Number(r.delivered_at), tz),
  };
}

/** Every Message record of the account, newest first (sms/index order). */
export async function accountMessagesFromDb(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db.selectFrom('messages').select('id').where('account_id', '=', accountId).orderBy('id', 'desc').execute();
  const out = [];
  for (const r of rows) out.push(await messageFromDb(ctx, r.id));
  return out;
}

/** The Batch record of a stored batch (API.md §10.6). */
export async function batchFromDb(ctx: TestApp, id: number, tz = 'UTC') {
  const r = await ctx.store.db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return {
    Id: r.id,
    GroupId: r.group_id,
    Number: r.number,
    Message: r.message,
    Type_Id: r.type_id,
    Recipients: r.recipients,
    Skipped: r.skipped,
    Credits: Number(r.credits),
    DateCreated: fmtTime(Number(r.created_at), tz),
  };
}

export async function balanceOf(ctx: TestApp, accountId: number): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('credit_balances')
    .select('available_credits')
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(r.available_credits);
}

/** Sets the balance as `msgsvc credits set` does: with its ledger entry, in one transaction. */
export async function setBalance(ctx: Pick<TestApp, 'store'>, accountId: number, credits: number): Promise<void> {
  await inTransaction(ctx.store, (tx) => changeCredits(tx, accountId, credits, 'set', Math.floor(Date.now() / 1000)));
}

/** Sets OptedOut of the account's contact with these digits (directly: API.md §11.5 STOP is another change). */
export async function setOptedOut(ctx: TestApp, accountId: number, digits: string, optedOut: 0 | 1): Promise<void> {
  await ctx.store.db
    .updateTable('contacts')
    .set({ opted_out: optedOut })
    .where('account_id', '=', accountId)
    .where('number', '=', digits)
    .execute();
}

export async function setNumberStatus(ctx: TestApp, accountId: number, digits: string, statusId: number): Promise<void> {
  await ctx.store.db
    .updateTable('account_numbers')
    .set({ status_id: statusId })
    .where('account_id', '=', accountId)
    .where('number', '=', digits)
    .execute();
}

export async function countMessages(ctx: TestApp, accountId?: number): Promise<number> {
  let q = ctx.store.db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n'));
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** A dispatcher over the app's store on a manual clock, with a sandbox that counts submits per message. */
export interface TestDispatcher {
  dispatcher: Dispatcher;
  clock: ManualClock;
  carrier: SandboxCarrier | Carrier;
  /** Submits per message id. */
  submits: Map<number, number>;
}

export function testDispatcher(
  ctx: Pick<TestApp, 'store'>,
  options: Partial<Omit<DispatcherOptions, 'store' | 'clock'>> & {
    receiptMs?: number;
    clock?: ManualClock;
    realTime?: boolean;
    submits?: Map<number, number>;
  } = {},
): TestDispatcher {
  // The next whole second: after every message the app (on the system clock) has queued so far.
  const clock = options.clock ?? createManualClock((Math.floor(Date.now() / 1000) + 1) * 1000);
  const submits = options.submits ?? new Map<number, number>();
  const carrier =
    options.carrier ??
    createSandboxCarrier({ receiptMs: options.receiptMs ?? 1000, onSubmit: (m) => submits.set(m.id, (submits.get(m.id) ?? 0) + 1) });
  const dispatcher = new Dispatcher({
    store: ctx.store,
    carrier,
    clock: options.realTime ? systemClock : clock,
    batchSize: options.batchSize ?? 100,
    leaseMs: options.leaseMs ?? 30_000,
    maxAttempts: options.maxAttempts ?? 5,
    pollMs: options.pollMs ?? 5,
    ...(options.retryDelayMs ? { retryDelayMs: options.retryDelayMs } : {}),
    ...(options.inbound ? { inbound: options.inbound } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  return { dispatcher, clock, carrier, submits };
}

/**
 * Uploads a 2×2 PNG and creates an MMS template of the demo account holding it, with `message` as
 * its Message (API.md §10.7).
 * @returns the template's Id.
 */
export async function createMmsTemplate(ctx: TestApp, demo: DemoAccount, message: string): Promise<number> {
  const mp = multipart([{ name: 'file', filename: 'm.png', data: pngImage(2, 2, () => [1, 2, 3]) }]);
  const up = await ctx.app.inject({
    method: 'POST',
    url: `/v1/media/upload?access_token=${demo.token}`,
    headers: { 'content-type': mp.contentType },
    payload: mp.body,
  });
  assert.equal(up.statusCode, 201, up.body);
  const res = await call(ctx.app, {
    method: 'POST',
    path: '/v1/mms-templates/create',
    token: demo.token,
    body: { Name: 'Promo', Message: message, MediaIds: [(JSON.parse(up.body) as { Id: number }).Id] },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }).Id;
}
