/**
 * The outbox payload is versioned (src/records/webhooks.ts): a delivery is rendered when it is
 * sent, which may be hours after it was written (the retry schedule) or much later (redeliver),
 * by a release other than the one that wrote it. These tests pin version 1: a row stored with it
 * (or before the field existed) renders to exactly the bytes it always did, and a payload of a
 * version this release does not know is never sent, kept on the retry schedule for an instance
 * that knows it, and logged.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWebhook, emitEvent } from '../../src/domain/webhooks.ts';
import { createManualClock, createTimeFormat } from '../../src/lib/time.ts';
import { eventBody, storedEvent, UnknownPayloadVersionError, type EventRow } from '../../src/records/webhooks.ts';
import type { EventType } from '../../src/records/statuses.ts';
import { inTransaction } from '../../src/store/db.ts';
import { insertDelivery } from '../../src/store/repositories/webhooks.ts';
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS, WebhookDeliverer } from '../../src/webhooks/deliverer.ts';
import { buildTestApp } from '../helpers/app.ts';
import { call } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

const AT = 1764000123;
const message = {
  id: 7,
  direction: 2,
  number: '12345',
  mobile_phone: '15551234567',
  message: 'STOP \u2028 now',
  type_id: 1,
  status_id: 7,
  segments: 1,
  credits: 0,
  batch_id: null,
  scheduled_message_id: null,
  error_code: '',
  created_at: 1764000000,
  sent_at: null,
  delivered_at: null,
};
const contact = {
  id: 3,
  number: '15551234567',
  opted_out: 1,
  first_name: 'Ann',
  last_name: 'Lee',
  birthday: null,
  email: '',
  zip: '',
  city: 'Oslo',
  created_at: 1764000000,
  updated_at: 1764000060,
  group_ids: [2, 5],
  custom_field_ids: [],
};
// A scheduled message's event stores its state row: the columns beside the record's are ignored.
const scheduled = {
  id: 9,
  mobile_phone: '15551234567',
  message: 'later',
  scheduled_at: 1764003600,
  status_id: 2,
  type_id: 2,
  mms_template_id: 4,
  subject: 'Hi',
  account_id: 1,
  number: '12345',
  reserved_credits: 0,
};

/** Version 1 as stored, and the body it renders to (the bytes of the release before versioning, in UTC). */
const V1: { type: EventType; row: EventRow; stored: string; body: string }[] = [
  {
    type: 'message.received',
    row: message,
    stored:
      '{"v":1,"type":"message.received","at":1764000123,"data":{"id":7,"direction":2,"number":"12345","mobile_phone":"15551234567","message":"STOP \u2028 now","type_id":1,"status_id":7,"segments":1,"credits":0,"batch_id":null,"scheduled_message_id":null,"error_code":"","created_at":1764000000,"sent_at":null,"delivered_at":null}}',
    body: '{"type":"message.received","timestamp":"2025-11-24T16:02:03Z","data":{"Id":7,"Direction":"Inbound","Number":"12345","MobilePhone":"15551234567","Message":"STOP \\u2028 now","Type_Id":1,"Type_Description":"SMS","Status_Id":7,"Status_Description":"Received","Segments":1,"Credits":0,"BatchId":"","ScheduledMessageId":"","ErrorCode":"","DateCreated":"2025-11-24 16:00:00","DateSent":null,"DateDelivered":null}}',
  },
  {
    type: 'contact.opted_out',
    row: contact,
    stored:
      '{"v":1,"type":"contact.opted_out","at":1764000123,"data":{"id":3,"number":"15551234567","opted_out":1,"first_name":"Ann","last_name":"Lee","birthday":null,"email":"","zip":"","city":"Oslo","created_at":1764000000,"updated_at":1764000060,"group_ids":[2,5],"custom_field_ids":[]}}',
    body: '{"type":"contact.opted_out","timestamp":"2025-11-24T16:02:03Z","data":{"Id":3,"Number":"15551234567","OptedOut":1,"FirstName":"Ann","LastName":"Lee","BirthDay":"0000-00-00","Email":"","Zip":"","City":"Oslo","DateCreated":"2025-11-24 16:00:00","DateUpdated":"2025-11-24 16:01:00","GroupIds":[2,5],"CustomFieldIds":[]}}',
  },
  {
    type: 'scheduled.action_required',
    row: scheduled,
    stored:
      '{"v":1,"type":"scheduled.action_required","at":1764000123,"data":{"id":9,"mobile_phone":"15551234567","message":"later","scheduled_at":1764003600,"status_id":2,"type_id":2,"mms_template_id":4,"subject":"Hi","account_id":1,"number":"12345","reserved_credits":0}}',
    body: '{"type":"scheduled.action_required","timestamp":"2025-11-24T16:02:03Z","data":{"Id":9,"MobilePhone":"15551234567","Message":"later","DateTime":"2025:11:24 17:00:00","Status_Id":2,"Status_Description":"Action Required","Type_Id":2,"Type_Description":"MMS","MmsTemplateId":4,"Subject":"Hi"}}',
  },
];

test('outbox payload version 1: written as stored, rendered byte for byte as before; a payload without `v` (written before versioning) is version 1', () => {
  const time = createTimeFormat('UTC');
  for (const v of V1) {
    assert.equal(storedEvent(v.type, AT, v.row), v.stored, v.type);
    assert.equal(eventBody(v.stored, time), v.body, v.type);
    const legacy = JSON.stringify({ type: v.type, at: AT, data: v.row });
    assert.equal(eventBody(legacy, time), v.body, `${v.type} without v`);
  }
});

test('outbox payload of an unknown version: rendering throws UnknownPayloadVersionError carrying the version', () => {
  const time = createTimeFormat('UTC');
  for (const version of [0, 2, '1', null]) {
    const payload = JSON.stringify({ v: version, type: 'message.received', at: AT, data: message });
    assert.throws(
      () => eventBody(payload, time),
      (err: unknown) => err instanceof UnknownPayloadVersionError && err.version === version,
      String(version),
    );
  }
});

storeTest(
  'the deliverer sends a stored version-1 payload as before, and keeps a payload of an unknown version unsent on the retry schedule (logged) until Failed',
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_WEBHOOK_ALLOW_PRIVATE: '1' });
    const demo = await ctx.seed();
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const clock = createManualClock();
    const hook = await createWebhook({ store: ctx.store, clock, allowPrivate: true }, demo.account.id, {
      Url: receiver.url,
      Events: ['message.received', 'contact.opted_out', 'scheduled.action_required'],
    });
    receiver.secret = hook.secret;
    const warnings: object[] = [];
    const deliverer = new WebhookDeliverer({
      store: ctx.store,
      clock,
      allowPrivate: true,
      timeoutMs: 2000,
      batchSize: 50,
      concurrency: 1,
      pollMs: 5,
      log: { warn: (obj) => warnings.push(obj), error: () => {} },
    });
    t.after(() => deliverer.stop());

    // Version 1 through the writer (emitEvent), and a row written before versioning (no `v`).
    await inTransaction(ctx.store, async (tx) => {
      for (const v of V1) assert.equal(await emitEvent(tx, demo.account.id, v.type, v.row, AT), 1);
    });
    const stored = await ctx.store.db.selectFrom('webhook_deliveries').select(['event', 'payload']).orderBy('id').execute();
    assert.deepEqual(
      stored.map((r) => r.payload),
      V1.map((v) => v.stored),
    );
    const legacy = V1[0]!;
    await insertDelivery(ctx.store.db, {
      accountId: demo.account.id,
      webhookId: hook.id,
      event: legacy.type,
      msgId: 'msg_legacy',
      payload: JSON.stringify({ type: legacy.type, at: AT, data: legacy.row }),
      now: AT,
      dueAt: clock.nowMs(),
    });
    assert.deepEqual(await deliverer.runOnce(), { claimed: 4, delivered: 4, retried: 0, failed: 0, lost: 0 });
    // One claim: the order of deliveries due at the same time is not defined.
    assert.deepEqual(receiver.received.map((r) => r.body).sort(), [...V1.map((v) => v.body), legacy.body].sort());
    assert.ok(receiver.received.every((r) => r.verified));

    // A payload of version 2 (a newer release sharing the database): never POSTed.
    receiver.received.length = 0;
    const future = JSON.stringify({ v: 2, type: 'message.received', at: AT, data: { shape: 'unknown here' } });
    await insertDelivery(ctx.store.db, {
      accountId: demo.account.id,
      webhookId: hook.id,
      event: 'message.received',
      msgId: 'msg_future',
      payload: future,
      now: AT,
      dueAt: clock.nowMs(),
    });
    const deliveryOf = async () => {
      const res = await call(ctx.app, { path: '/v1/webhooks/deliveries', token: demo.token, query: `id=${hook.id}` });
      return (
        JSON.parse(res.body) as { Event: string; Status: string; Attempts: number; LastStatusCode: number | null; LastError: string }[]
      )[0]!;
    };
    assert.deepEqual(await deliverer.runOnce(), { claimed: 1, delivered: 0, retried: 1, failed: 0, lost: 0 });
    assert.deepEqual(
      (({ Event, Status, Attempts, LastStatusCode, LastError }) => ({ Event, Status, Attempts, LastStatusCode, LastError }))(
        await deliveryOf(),
      ),
      { Event: 'message.received', Status: 'Pending', Attempts: 1, LastStatusCode: null, LastError: 'unknown payload version' },
    );
    assert.equal(warnings.length, 1);
    assert.equal((warnings[0] as { version: unknown }).version, 2);
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      clock.advance(RETRY_SCHEDULE_MS[attempt - 1]!);
      assert.equal((await deliverer.runOnce()).claimed, 1, `attempt ${attempt + 1}`);
    }
    const last = await deliveryOf();
    assert.equal(last.Status, 'Failed');
    assert.equal(last.Attempts, MAX_ATTEMPTS);
    assert.equal(last.LastError, 'unknown payload version');
    assert.equal(receiver.received.length, 0, 'never POSTed');
    assert.equal(warnings.length, MAX_ATTEMPTS);
  },
);
