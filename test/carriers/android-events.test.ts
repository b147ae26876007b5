import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { androidEventAction, androidReasonCode, parseAndroidEvent, verifyAndroidEvent } from '../../src/carriers/android-events.ts';

const KEY = 'k3y-Of-The-Ph0ne';
const NOW = 1_760_000_000;

/** Signs as the app's PayloadSingingPlugin does: hex HMAC-SHA256(key, body + timestamp). */
function sign(body: string, timestamp: number | string, key = KEY) {
  const ts = String(timestamp);
  return {
    'x-timestamp': ts,
    'x-signature': createHmac('sha256', key)
      .update(body + ts)
      .digest('hex'),
  };
}

const delivered = JSON.stringify({
  id: 'Ey6ECgOkVVFjz3CL48B8C',
  webhookId: 'msgsvc-phone-sms-delivered',
  event: 'sms:delivered',
  deviceId: 'ffffffffceb0b1db0000018e937c815b',
  payload: {
    messageId: 'msgsvc-42',
    sender: null,
    recipient: '+447700900123',
    phoneNumber: '+447700900123',
    simNumber: null,
    deliveredAt: '2026-02-17T12:00:00.000+07:00',
  },
});

test('verifyAndroidEvent: a signature made as the app makes it passes; string or bytes alike', () => {
  assert.equal(verifyAndroidEvent(KEY, delivered, sign(delivered, NOW), NOW), true);
  assert.equal(verifyAndroidEvent(KEY, Buffer.from(delivered), sign(delivered, NOW), NOW), true);
  // Header names in any case (HTTP headers are case-insensitive), hex in upper case.
  const h = sign(delivered, NOW);
  assert.equal(
    verifyAndroidEvent(KEY, delivered, { 'X-Timestamp': h['x-timestamp'], 'X-Signature': h['x-signature'].toUpperCase() }, NOW),
    true,
  );
  // Non-ASCII bodies are signed over their UTF-8 bytes.
  const unicode = JSON.stringify({ event: 'sms:received', payload: { message: 'Grüße 👋' } });
  assert.equal(verifyAndroidEvent(KEY, Buffer.from(unicode, 'utf8'), sign(unicode, NOW), NOW), true);
});

test('verifyAndroidEvent: anything altered, missing, stale or malformed is refused (never throws)', () => {
  const h = sign(delivered, NOW);
  assert.equal(verifyAndroidEvent(KEY, delivered.replace('msgsvc-42', 'msgsvc-43'), h, NOW), false, 'body altered');
  assert.equal(verifyAndroidEvent(KEY, delivered, { ...h, 'x-timestamp': String(NOW + 1) }, NOW), false, 'timestamp altered');
  assert.equal(
    verifyAndroidEvent(KEY, delivered, { ...h, 'x-signature': h['x-signature'].replace(/^./, (c) => (c === '0' ? '1' : '0')) }, NOW),
    false,
    'signature altered',
  );
  assert.equal(verifyAndroidEvent('another-key', delivered, h, NOW), false, 'wrong key');
  assert.equal(verifyAndroidEvent('', delivered, sign(delivered, NOW, ''), NOW), false, 'empty key');
  assert.equal(verifyAndroidEvent(KEY, delivered, { 'x-timestamp': h['x-timestamp'] }, NOW), false, 'no signature');
  assert.equal(verifyAndroidEvent(KEY, delivered, { 'x-signature': h['x-signature'] }, NOW), false, 'no timestamp');
  assert.equal(
    verifyAndroidEvent(KEY, delivered, { ...h, 'x-signature': [h['x-signature'], h['x-signature']] }, NOW),
    false,
    'repeated header',
  );
  assert.equal(verifyAndroidEvent(KEY, delivered, { ...h, 'x-signature': 'zz' + h['x-signature'].slice(2) }, NOW), false, 'not hex');
  assert.equal(verifyAndroidEvent(KEY, delivered, { ...h, 'x-signature': h['x-signature'].slice(0, 40) }, NOW), false, 'short');
  const odd = sign(delivered, '1.7e9');
  assert.equal(verifyAndroidEvent(KEY, delivered, odd, NOW), false, 'timestamp not an integer');
  assert.equal(verifyAndroidEvent(KEY, 42 as unknown as string, h, NOW), false, 'body of the wrong type');
  // ±5 minutes (the app's docs): the edges pass, one second beyond does not (replays).
  assert.equal(verifyAndroidEvent(KEY, delivered, sign(delivered, NOW - 300), NOW), true);
  assert.equal(verifyAndroidEvent(KEY, delivered, sign(delivered, NOW + 300), NOW), true);
  assert.equal(verifyAndroidEvent(KEY, delivered, sign(delivered, NOW - 301), NOW), false, 'stale');
  assert.equal(verifyAndroidEvent(KEY, delivered, sign(delivered, NOW + 301), NOW), false, 'from the future');
});

test('parseAndroidEvent: delivered and failed are receipts; the reason is the ErrorCode, at most 64 characters', () => {
  assert.deepEqual(parseAndroidEvent(delivered), {
    kind: 'receipt',
    carrierMessageId: 'msgsvc-42',
    status: 'delivered',
    errorCode: '',
    eventId: 'Ey6ECgOkVVFjz3CL48B8C',
    occurredAtMs: Date.parse('2026-02-17T05:00:00.000Z'),
  });
  const failed = {
    id: 'e2',
    event: 'sms:failed',
    payload: {
      messageId: 'msgsvc-7',
      phoneNumber: '+447700900123',
      failedAt: '2026-02-17T12:00:00.000+07:00',
      reason: 'RESULT_ERROR_GENERIC_FAILURE',
    },
  };
  const r = parseAndroidEvent(failed);
  assert.equal(r.kind, 'receipt');
  assert.equal(r.kind === 'receipt' && r.status, 'undelivered');
  assert.equal(r.kind === 'receipt' && r.errorCode, 'RESULT_ERROR_GENERIC_FAILURE');
  const long = parseAndroidEvent({ ...failed, payload: { ...failed.payload, reason: `Failed: ${'é'.repeat(100)}\n` } });
  assert.equal(long.kind === 'receipt' && Array.from(long.errorCode).length, 64);
  assert.equal(androidReasonCode(''), 'UNDELIV');
  assert.equal(androidReasonCode(undefined), 'UNDELIV');
  assert.equal(androidReasonCode('a\u0000b\r\nc'), 'a b c');
  assert.equal(Array.from(androidReasonCode('👋'.repeat(70))).length, 64, 'cut by characters, not UTF-16 units');
});

test('parseAndroidEvent: received is an inbound text; sent and other events change nothing; junk is ignored', () => {
  const received = {
    id: 'evt-1',
    webhookId: 'w',
    event: 'sms:received',
    deviceId: 'd',
    payload: {
      messageId: 'abc123',
      message: 'STOP',
      sender: '+15005550006',
      recipient: '+1 (415) 555-0100',
      phoneNumber: '+15005550006',
      simNumber: 1,
      receivedAt: '2024-06-22T15:46:11.000+07:00',
    },
  };
  assert.deepEqual(parseAndroidEvent(received), {
    kind: 'inbound',
    from: '15005550006',
    to: '14155550100',
    text: 'STOP',
    eventId: 'evt-1',
    occurredAtMs: Date.parse('2024-06-22T08:46:11.000Z'),
  });
  // Before app v1.54.0: phoneNumber only, no recipient.
  const old = parseAndroidEvent({
    id: 'evt-2',
    event: 'sms:received',
    payload: { messageId: 'x', message: 'hi', phoneNumber: '6505551212', receivedAt: 'not a date' },
  });
  assert.deepEqual(old, { kind: 'inbound', from: '6505551212', text: 'hi', eventId: 'evt-2' });
  assert.equal(parseAndroidEvent({ id: 'e', event: 'sms:received', payload: { message: 'promo', sender: 'VODAFONE' } }).kind, 'ignore');
  assert.equal(parseAndroidEvent({ event: 'sms:received', payload: { message: 'no id', sender: '+1500' } }).kind, 'ignore');
  assert.equal(
    parseAndroidEvent({ id: 'e', event: 'sms:sent', payload: { messageId: 'msgsvc-1', sentAt: '2024-06-22T15:46:11.000+07:00' } }).kind,
    'ignore',
  );
  assert.equal(parseAndroidEvent({ id: 'e', event: 'system:ping', payload: {} }).kind, 'ignore');
  assert.equal(parseAndroidEvent({ id: 'e', event: 'sms:delivered', payload: {} }).kind, 'ignore');
  assert.equal(parseAndroidEvent({ id: 'e', event: 'sms:delivered' }).kind, 'ignore');
  for (const junk of ['{', '', 'null', '[]', '"x"', Buffer.from([0xff, 0xfe]), 42, null, undefined]) {
    assert.equal(parseAndroidEvent(junk).kind, 'ignore', String(junk));
  }
});

test('androidEventAction: 403 unless signed; an inbound text goes to the configured number with the event id', () => {
  const carrier = { signingKey: KEY, number: '447700900999' };
  const body = JSON.stringify({
    id: 'evt-9',
    event: 'sms:received',
    payload: { message: 'hello', sender: '+447700900123', recipient: null },
  });
  assert.deepEqual(androidEventAction(carrier, body, sign(body, NOW), NOW), {
    kind: 'inbound',
    inbound: { from: '447700900123', to: '447700900999', text: 'hello', carrierMessageId: 'evt-9' },
  });
  assert.deepEqual(androidEventAction(carrier, body, sign(body, NOW, 'other'), NOW), { kind: 'forbidden' });
  assert.deepEqual(androidEventAction(carrier, body, sign(body, NOW - 3600), NOW), { kind: 'forbidden' });
  const r = androidEventAction(carrier, delivered, sign(delivered, NOW), NOW);
  assert.equal(r.kind, 'receipt');
  assert.deepEqual(r.kind === 'receipt' && r.receipt, { carrierMessageId: 'msgsvc-42', status: 'delivered', errorCode: '' });
  const junk = '{"not":"an event"}';
  assert.equal(androidEventAction(carrier, junk, sign(junk, NOW), NOW).kind, 'ignore');
});
