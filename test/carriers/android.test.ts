import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import {
  ANDROID_EVENTS,
  androidWebhookId,
  createAndroidCarrier,
  type AndroidCarrier,
  type AndroidCarrierOptions,
} from '../../src/carriers/android.ts';
import { androidEventAction, type AndroidEventAction } from '../../src/carriers/android-events.ts';
import type { CarrierSink, OutboundMessage } from '../../src/dispatch/carrier.ts';
import { FakePhone } from '../helpers/fake-phone.ts';
import { freePort } from '../helpers/net.ts';

const sink: CarrierSink = { receipt: async () => {}, inbound: async () => {} };
const PUBLIC = 'http://127.0.0.1:9'; // the app accepts http:// webhook URLs on 127.0.0.1 only

function message(id: number, over: Partial<OutboundMessage> = {}): OutboundMessage {
  return { id, accountId: 1, from: '447700900999', to: '447700900123', text: `hello ${id}`, typeId: 1, segments: 1, attempt: 1, ...over };
}

/** Log lines, kept to check that no secret is ever written. */
function recorder() {
  const lines: string[] = [];
  const put = (obj: object, msg?: string) => void lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  return { lines, log: { info: put, warn: put, error: put } };
}

function carrierFor(phone: FakePhone, over: Partial<AndroidCarrierOptions> = {}): AndroidCarrier {
  return createAndroidCarrier({
    name: 'phone1',
    baseUrl: phone.baseUrl,
    username: phone.username,
    password: phone.password,
    publicUrl: PUBLIC,
    rate: 1000,
    window: 10,
    timeoutMs: 2_000,
    registerMinMs: 20,
    registerMaxMs: 100,
    ...over,
  });
}

/** Polls `cond` every 10 ms for at most `ms`. */
async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('start registers the four events at {publicUrl}/v1/carriers/{name}/events under stable ids, idempotently', async () => {
  const phone = await FakePhone.create();
  // Left over: a stale webhook of ours, a stranger pointing at our URL (events twice), someone else's.
  phone.webhooks.set('msgsvc-phone1-sms-old', { id: 'msgsvc-phone1-sms-old', url: 'https://old.example/x', event: 'sms:sent' });
  phone.webhooks.set('Xy12', { id: 'Xy12', url: `${PUBLIC}/v1/carriers/phone1/events`, event: 'sms:received' });
  phone.webhooks.set('keep', { id: 'keep', url: 'https://other.example/hook', event: 'sms:received' });
  const carrier = carrierFor(phone, { publicUrl: `${PUBLIC}/` });
  try {
    assert.equal(carrier.ready!(), false);
    await carrier.start(sink);
    assert.equal(carrier.ready!(), true);
    assert.equal(carrier.state(), 'ready');
    assert.equal(carrier.eventsUrl, `${PUBLIC}/v1/carriers/phone1/events`);
    const ours = [...phone.webhooks.values()].filter((w) => w.id !== 'keep').sort((a, b) => a.id.localeCompare(b.id));
    assert.deepEqual(
      ours,
      ['sms:delivered', 'sms:failed', 'sms:received', 'sms:sent'].map((event) => ({
        id: `msgsvc-phone1-${event.replace(':', '-')}`,
        url: carrier.eventsUrl,
        event,
      })),
    );
    assert.ok(phone.webhooks.has('keep'), 'a webhook of someone else is left alone');
    assert.ok(phone.requests.every((r) => r.authorization === `Basic ${Buffer.from('sms:Ph0ne-Pa55').toString('base64')}`));
    await carrier.stop();
    // Again (a restart): nothing new is written, nothing doubles.
    const posts = phone.count('POST', '/webhooks');
    const again = carrierFor(phone);
    await again.start(sink);
    assert.equal(again.ready!(), true);
    assert.equal(phone.count('POST', '/webhooks'), posts);
    assert.equal(phone.webhooks.size, 5);
    await again.stop();
  } finally {
    await carrier.stop();
    await phone.stop();
  }
});

test('submit: accepted with the phone id; the same message again (a crash, a lost answer) is not sent twice', async () => {
  const phone = await FakePhone.create();
  const carrier = carrierFor(phone);
  try {
    await carrier.start(sink);
    assert.equal(carrier.supportsMms, false);
    assert.deepEqual(await carrier.submit(message(42)), { kind: 'accepted', carrierMessageId: 'msgsvc-42' });
    const sent = phone.requests.find((r) => r.method === 'POST' && r.path === '/message')!;
    assert.deepEqual(JSON.parse(sent.body), {
      id: 'msgsvc-42',
      message: 'hello 42',
      phoneNumbers: ['+447700900123'],
      withDeliveryReport: true,
    });
    assert.deepEqual(await carrier.submit(message(42, { attempt: 2 })), { kind: 'accepted', carrierMessageId: 'msgsvc-42' });
    assert.equal(phone.messages.size, 1, 'one message on the phone');
    assert.equal(phone.count('GET', '/message/msgsvc-42'), 1, 'the 409 was checked against what the phone holds');
    // Another message under our id (the database was reset): refused, never counted as sent.
    phone.hold('msgsvc-43', '+447700900555', 'someone else');
    assert.deepEqual(await carrier.submit(message(43)), { kind: 'failed', errorCode: 'ANDROID_409' });
    // A short code goes as it is, without the app's phone number validation.
    assert.equal((await carrier.submit(message(44, { to: '12345' }))).kind, 'accepted');
    assert.deepEqual(phone.messages.get('msgsvc-44')!.phoneNumbers, ['12345']);
    assert.equal(phone.messages.get('msgsvc-44')!.skipPhoneValidation, 'true');
    assert.equal(phone.messages.get('msgsvc-42')!.skipPhoneValidation, null);
    // An MMS never reaches the phone.
    assert.deepEqual(await carrier.submit(message(45, { typeId: 2 })), { kind: 'failed', errorCode: 'NO_MMS_ROUTE' });
    assert.equal(phone.messages.has('msgsvc-45'), false);
  } finally {
    await carrier.stop();
    await phone.stop();
  }
});

test('submit: 4xx is permanent, 429/5xx/timeout/refused are retried; an unreachable phone makes the carrier not ready until it is back', async () => {
  const phone = await FakePhone.create();
  const carrier = carrierFor(phone, { timeoutMs: 300 });
  try {
    await carrier.start(sink);
    phone.faults.send = 400;
    assert.deepEqual(await carrier.submit(message(1)), { kind: 'failed', errorCode: 'ANDROID_400' });
    phone.faults.send = 404;
    assert.deepEqual(await carrier.submit(message(2)), { kind: 'failed', errorCode: 'ANDROID_404' });
    phone.faults.send = 429;
    assert.deepEqual(await carrier.submit(message(3)), { kind: 'retry', errorCode: 'ANDROID_429' });
    phone.faults.send = 500;
    assert.deepEqual(await carrier.submit(message(4)), { kind: 'retry', errorCode: 'ANDROID_500' });
    phone.faults.send = 503;
    assert.deepEqual(await carrier.submit(message(5)), { kind: 'retry', errorCode: 'ANDROID_503' });
    assert.equal(carrier.ready!(), true, 'a phone that answers (even 5xx) is reachable');

    phone.faults.send = 'hang';
    const started = Date.now();
    assert.deepEqual(await carrier.submit(message(6)), { kind: 'retry', errorCode: 'ANDROID_TIMEOUT' });
    assert.ok(Date.now() - started < 2_000, 'bounded by timeoutMs');
    // Registration still answers, so the carrier is back at once.
    await until(() => carrier.ready!());
    phone.faults.send = 'reset';
    assert.deepEqual(await carrier.submit(message(7)), { kind: 'retry', errorCode: 'ANDROID_UNREACHABLE' });
    await until(() => carrier.ready!());

    // The phone goes away: not ready (the dispatcher claims nothing), until it answers again.
    phone.faults.send = undefined;
    await phone.stop();
    assert.deepEqual(await carrier.submit(message(8)), { kind: 'retry', errorCode: 'ANDROID_UNREACHABLE' });
    assert.equal(carrier.ready!(), false);
    assert.deepEqual(await carrier.submit(message(9)), { kind: 'retry', errorCode: 'ANDROID_NOT_READY' });
    await phone.start();
    await until(() => carrier.ready!());
    assert.equal((await carrier.submit(message(10))).kind, 'accepted');
  } finally {
    await carrier.stop();
    await phone.stop();
  }
});

test('start does not throw for a phone that is not up: not ready, and registered once it comes up', async () => {
  const port = await freePort();
  const phone = await FakePhone.create({ port, down: true });
  const { lines, log } = recorder();
  const carrier = carrierFor(phone, { log });
  try {
    await carrier.start(sink);
    assert.equal(carrier.ready!(), false);
    assert.equal(carrier.state(), 'connecting');
    await until(() => lines.filter((l) => l.includes('registration failed')).length >= 2);
    await phone.start();
    await until(() => carrier.ready!());
    assert.equal(phone.webhooks.size, ANDROID_EVENTS.length);
  } finally {
    await carrier.stop();
    await phone.stop();
  }
});

test('a phone that refuses registration (hangs, 5xx, wrong password, a URL it will not take) keeps the carrier not ready and retrying', async () => {
  const phone = await FakePhone.create();
  const { lines, log } = recorder();
  try {
    // Hanging: bounded by the timeout, retried.
    phone.faults.webhooks = 'hang';
    const hanging = carrierFor(phone, { timeoutMs: 100, log });
    await hanging.start(sink);
    assert.equal(hanging.ready!(), false);
    phone.faults.webhooks = 500;
    await until(() => phone.count('GET', '/webhooks') >= 3);
    assert.equal(hanging.ready!(), false);
    phone.faults.webhooks = undefined;
    await until(() => hanging.ready!());
    await hanging.stop();

    // Wrong password: 401 at every try; the password never appears in a log line.
    const wrong = carrierFor(phone, { password: 'Wr0ng-Secret-Pw', log });
    await wrong.start(sink);
    const before = phone.requests.length;
    await until(() => phone.requests.length >= before + 2);
    assert.equal(wrong.ready!(), false);
    assert.deepEqual(await wrong.submit(message(1)), { kind: 'retry', errorCode: 'ANDROID_NOT_READY' });
    await wrong.stop();
    const stoppedAt = phone.requests.length;
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(phone.requests.length, stoppedAt, 'stop() ends the retries');

    // A public URL the app does not take (http:// to another host): 400, retried, not ready.
    const plain = carrierFor(phone, { publicUrl: 'http://msgsvc.example', log });
    await plain.start(sink);
    assert.equal(plain.ready!(), false);
    assert.ok(lines.some((l) => l.includes('only https://')));
    await plain.stop();

    for (const l of lines) {
      assert.ok(!l.includes('Wr0ng-Secret-Pw') && !l.includes(phone.password) && !l.includes(phone.signingKey), l);
    }
    assert.ok(lines.some((l) => l.includes('HTTP 401')));
  } finally {
    await phone.stop();
  }
});

test('a 401 at submit (password changed on the phone) is retried, not a failure, and makes the carrier not ready', async () => {
  const phone = await FakePhone.create();
  const carrier = carrierFor(phone, { password: phone.password });
  try {
    await carrier.start(sink);
    (phone as unknown as { password: string }).password = 'changed-on-the-phone';
    assert.deepEqual(await carrier.submit(message(1)), { kind: 'retry', errorCode: 'ANDROID_401' });
    assert.equal(carrier.ready!(), false);
  } finally {
    await carrier.stop();
    await phone.stop();
  }
});

test('a baseUrl carrying credentials is refused without repeating them', () => {
  assert.throws(
    () =>
      createAndroidCarrier({
        name: 'p',
        baseUrl: 'http://sms:T0p-Secret@127.0.0.1:8080',
        username: 'sms',
        password: 'T0p-Secret',
        publicUrl: PUBLIC,
        rate: 10,
        window: 10,
      }),
    (err: Error) => /credentials/.test(err.message) && !err.message.includes('T0p-Secret'),
  );
});

test('the SSRF guard: with allowPrivate false a loopback phone is refused (not ready, never contacted)', async () => {
  const phone = await FakePhone.create();
  const carrier = carrierFor(phone, { allowPrivate: false });
  try {
    await carrier.start(sink);
    assert.equal(carrier.ready!(), false);
    assert.equal(phone.requests.length, 0);
  } finally {
    await carrier.stop();
    await phone.stop();
  }
});

test('events end to end: the phone fires signed events at the registered URL; altered or stale ones get 403', async () => {
  const phone = await FakePhone.create();
  const seen: AndroidEventAction[] = [];
  // The events route as the lead wires it: raw body + headers → androidEventAction.
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const action = androidEventAction(
        { signingKey: phone.signingKey, number: '447700900999' },
        Buffer.concat(chunks),
        req.headers,
        Math.floor(Date.now() / 1000),
      );
      seen.push(action);
      res.writeHead(action.kind === 'forbidden' ? 403 : 200).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const publicUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const carrier = carrierFor(phone, { publicUrl });
  try {
    await carrier.start(sink);
    await carrier.submit(message(42));
    const recipient = { sender: null, recipient: '+447700900123', phoneNumber: '+447700900123', simNumber: null };
    assert.equal(
      (await phone.fire('sms:sent', { messageId: 'msgsvc-42', ...recipient, partsCount: 1, sentAt: new Date().toISOString() })).status,
      200,
    );
    assert.equal(
      (await phone.fire('sms:delivered', { messageId: 'msgsvc-42', ...recipient, deliveredAt: new Date().toISOString() })).status,
      200,
    );
    assert.equal(
      (
        await phone.fire('sms:failed', {
          messageId: 'msgsvc-42',
          ...recipient,
          failedAt: new Date().toISOString(),
          reason: 'RESULT_ERROR_NO_SERVICE',
        })
      ).status,
      200,
    );
    const inbound = {
      messageId: 'h1',
      message: 'STOP',
      sender: '+447700900123',
      recipient: null,
      phoneNumber: '+447700900123',
      simNumber: 1,
      receivedAt: new Date().toISOString(),
    };
    assert.equal((await phone.fire('sms:received', inbound, { id: 'evt-1' })).status, 200);
    assert.deepEqual(
      seen.map((a) => a.kind),
      ['ignore', 'receipt', 'receipt', 'inbound'],
    );
    assert.deepEqual(seen[1]!.kind === 'receipt' && seen[1]!.receipt, {
      carrierMessageId: 'msgsvc-42',
      status: 'delivered',
      errorCode: '',
    });
    assert.deepEqual(seen[2]!.kind === 'receipt' && seen[2]!.receipt, {
      carrierMessageId: 'msgsvc-42',
      status: 'undelivered',
      errorCode: 'RESULT_ERROR_NO_SERVICE',
    });
    assert.deepEqual(seen[3]!.kind === 'inbound' && seen[3]!.inbound, {
      from: '447700900123',
      to: '447700900999',
      text: 'STOP',
      carrierMessageId: 'evt-1',
    });

    assert.equal((await phone.fire('sms:received', inbound, { tamper: (b) => b.replace('STOP', 'STAR') })).status, 403);
    assert.equal((await phone.fire('sms:received', inbound, { timestamp: Math.floor(Date.now() / 1000) - 600 })).status, 403);
    assert.equal((await phone.fire('sms:received', inbound, { key: 'not-the-key' })).status, 403);
    assert.equal(seen.filter((a) => a.kind === 'forbidden').length, 3);
    assert.ok(ANDROID_EVENTS.every((e) => phone.webhooks.get(androidWebhookId('phone1', e))?.url === carrier.eventsUrl));
  } finally {
    await carrier.stop();
    await phone.stop();
    receiver.close();
  }
});
