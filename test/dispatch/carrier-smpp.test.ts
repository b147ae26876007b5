/**
 * The SMPP 3.4 carrier (API.md §11.4) against an SMSC we did not write: test/smsc/fake-smsc.pl,
 * on Perl's Net::SMPP (an independent codec), as a separate process on a loopback port, with real
 * sockets and the real dispatcher loop over each store:
 * - a 300-character GSM text and a 100-character UCS-2 text: the bytes, UDH and data_coding as the
 *   SMSC decoded them, and one Delivered per message from the receipts of all its parts (the
 *   carrier chosen by MSGSVC_SMPP_URL through createDispatcher);
 * - receipts: Delivered and Undelivered, matched by the receipted_message_id TLV alone and by the
 *   `id:` text alone; a receipt that beats the Sent commit is held and applied again;
 * - inbound through the SMSC: STOP and a keyword (two concatenated parts, joined) run API.md §11.5;
 * - throttling (ESME_RTHROTTLED, ESME_RMSGQFUL) then success; a permanent error → Failed with the
 *   status name, refunded; an MMS → NO_MMS_ROUTE;
 * - TLS (smpps://) through stunnel4 in front of the SMSC.
 * The kill-and-restart case is in reliability-smpp.test.ts. Without Perl Net::SMPP or stunnel the
 * tests skip with one line (under CI=true they fail).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../src/domain/demo.ts';
import type { CarrierSink, Receipt } from '../../src/dispatch/carrier.ts';
import { createCarrier, createDispatcher, type Dispatcher } from '../../src/dispatch/index.ts';
import { createSmppCarrier, type SmppCarrier, type SmppCarrierOptions } from '../../src/dispatch/smpp.ts';
import { receiptLanded } from '../../src/store/repositories/smpp.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { call } from '../helpers/operations.ts';
import { balanceOf, messageFromDb } from '../helpers/sms.ts';
import { FakeSmsc, smppSkip, startStunnel, type SubmitEvent } from '../helpers/smsc.ts';
import { storeTest } from '../helpers/stores.ts';

const skip = smppSkip();
const SHORT = '55155'; // an Active number of every demo account
const STOP_REPLY = 'You have been unsubscribed and will receive no more messages. Reply START to resubscribe.';

interface Env {
  smsc: FakeSmsc;
  ctx: TestApp;
  demo: DemoAccount;
  carrier: SmppCarrier;
  dispatcher: Dispatcher;
  close(): Promise<void>;
}

/** Fast timings for tests: short backoffs, a short hold. */
const FAST: Partial<SmppCarrierOptions> = {
  rate: 2000,
  window: 10,
  timeoutMs: 2000,
  enquireMs: 1000,
  reconnectMinMs: 50,
  reconnectMaxMs: 400,
  throttleMinMs: 20,
  throttleMaxMs: 200,
  receiptHoldMs: 5000,
};

/**
 * An SMSC with `args`, a test app with a demo account, and a running dispatcher whose carrier is
 * SMPP: built by createDispatcher from MSGSVC_SMPP_URL (`viaConfig`), or by createSmppCarrier with
 * FAST timings and `options`.
 */
async function setup(
  t: { after(fn: () => unknown): void },
  args: string[],
  options: Partial<SmppCarrierOptions> & { viaConfig?: boolean; url?: (port: number) => string } = {},
): Promise<Env> {
  const smsc = await FakeSmsc.start(['--system-id', 'msgsvc', '--password', 'secret', ...args]);
  const url = options.url?.(smsc.port) ?? `smpp://msgsvc:secret@127.0.0.1:${smsc.port}`;
  const ctx = await buildTestApp(undefined, {
    MSGSVC_SMPP_URL: url,
    MSGSVC_SMPP_TIMEOUT_MS: '2000',
    MSGSVC_SMPP_RATE: '2000',
    MSGSVC_DISPATCH_POLL_MS: '10',
  });
  const demo = await ctx.seed();
  const { viaConfig, url: _u, ...rest } = options;
  const carrier = viaConfig
    ? (createCarrier(ctx.config, ctx.store) as SmppCarrier)
    : createSmppCarrier({ url, ...FAST, ...rest, receiptLanded: (id) => receiptLanded(ctx.store.db, id) } as SmppCarrierOptions);
  const dispatcher = createDispatcher(ctx.config, ctx.store, { carrier });
  await dispatcher.start();
  const smppCarrier = carrier;
  let closed = false;
  const env: Env = {
    smsc,
    ctx,
    demo,
    carrier: smppCarrier,
    dispatcher,
    async close() {
      if (closed) return;
      closed = true;
      await dispatcher.stop();
      await ctx.close();
      await smsc.kill();
    },
  };
  t.after(() => env.close());
  return env;
}

async function send(env: Env, body: Record<string, unknown>): Promise<number> {
  const res = await call(env.ctx.app, { method: 'POST', path: '/v1/sms/send', token: env.demo.token, body: { Number: SHORT, ...body } });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

const status = async (ctx: TestApp, id: number) => {
  const m = await messageFromDb(ctx, id);
  return `${m.Status_Description}${m.ErrorCode ? ` ${m.ErrorCode}` : ''}`;
};

/** Polls (every 20 ms, at most `ms`) until every message's status is one of `finals`; returns the statuses. */
async function settle(
  ctx: TestApp,
  ids: number[],
  ms = 10_000,
  finals = ['Delivered', 'Undelivered', 'Failed', 'Rejected'],
): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const now = await Promise.all(ids.map((id) => status(ctx, id)));
    if (now.every((s) => finals.includes(s.split(' ')[0]!))) return now;
    if (Date.now() > deadline) throw new Error(`not settled after ${ms} ms: ${now.join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// GSM 03.38 (3GPP TS 23.038 §6.2.1), the few characters the test text uses beyond A–Z a–z 0–9 and
// space (which are their ASCII codes): written out here, independently of src/.
const GSM_TEST: Record<string, number[]> = {
  '@': [0x00],
  '£': [0x01],
  _: [0x11],
  '!': [0x21],
  '.': [0x2e],
  '€': [0x1b, 0x65],
  '{': [0x1b, 0x28],
  '}': [0x1b, 0x29],
};
function gsmSeptets(text: string): number[][] {
  return [...text].map((c) => GSM_TEST[c] ?? (/^[A-Za-z0-9 ]$/.test(c) ? [c.charCodeAt(0)] : assert.fail(`no GSM code for ${c}`)));
}

/** Parts of a long GSM text: 153 septets each, an escape pair never split (3GPP TS 23.040 concatenation). */
function gsmParts(text: string): Buffer[] {
  const parts: number[][] = [[]];
  for (const chr of gsmSeptets(text)) {
    if (parts.at(-1)!.length + chr.length > 153) parts.push([]);
    parts.at(-1)!.push(...chr);
  }
  return parts.map((p) => Buffer.from(p));
}

storeTest(
  `SMPP: a 300-character GSM text and a 100-character UCS-2 text reach the SMSC as concatenated parts (UDH, data_coding 0 unpacked / 8 UTF-16BE, bytes), and each ends Delivered once every part's receipt is in`,
  { skip },
  async (t) => {
    const env = await setup(t, ['--receipt-delay-ms', '0'], { viaConfig: true });
    assert.equal(env.carrier.name, `smpp://127.0.0.1:${env.smsc.port}`, 'MSGSVC_SMPP_URL chose the SMPP carrier');
    const gsm = ('Hello @ world £5 _ €10 {x}! ' + 'abcdefghij'.repeat(40)).slice(0, 300);
    const ucs2 = 'Привет, мир! Καλημέρα κόσμε. '.repeat(5).slice(0, 100);
    assert.equal([...gsm].length, 300);
    assert.equal(ucs2.length, 100);
    const gsmId = await send(env, { MobilePhone: '+15551230001', Message: gsm });
    const ucsId = await send(env, { MobilePhone: '+15551230002', Message: ucs2 });
    assert.deepEqual(await settle(env.ctx, [gsmId, ucsId]), ['Delivered', 'Delivered']);

    const byDest = (d: string) => env.smsc.submits().filter((e) => e.dst === d);
    const check = (parts: SubmitEvent[], dataCoding: number, expected: Buffer[]) => {
      assert.equal(parts.length, expected.length);
      const ref = parts[0]!.udh_hex.slice(6, 8);
      parts.forEach((p, i) => {
        assert.equal(p.status, 0);
        assert.equal(p.src, SHORT);
        assert.equal(p.esm_class, 0x40, 'UDHI set');
        assert.equal(p.data_coding, dataCoding);
        assert.equal(p.registered_delivery, 1, 'a receipt is asked for every part');
        assert.equal(
          p.udh_hex,
          `050003${ref}${String(expected.length).padStart(2, '0')}${String(i + 1).padStart(2, '0')}`,
          'UDH: IEI 00, 8-bit reference, total, sequence',
        );
        assert.equal(p.sm_hex, expected[i]!.toString('hex'));
      });
    };
    const gsmParts_ = gsmParts(gsm);
    assert.equal(gsmParts_.length, 2);
    check(byDest('15551230001'), 0, gsmParts_);
    const utf16be = (s: string) => Buffer.from(s, 'utf16le').swap16();
    check(byDest('15551230002'), 8, [utf16be(ucs2.slice(0, 67)), utf16be(ucs2.slice(67))]);
    // The message's carrier id is its first part's id; both were charged the parts sent.
    const row = await env.ctx.store.db
      .selectFrom('messages')
      .select(['carrier_message_id', 'segments'])
      .where('id', '=', gsmId)
      .executeTakeFirstOrThrow();
    assert.equal(row.carrier_message_id, byDest('15551230001')[0]!.message_id);
    assert.equal(row.segments, 2);
    const s = env.carrier.status();
    assert.equal(s.state, 'bound');
    assert.equal(s.counters.receipts, 4, 'four receipts (two per message) resolved two messages');
    assert.equal(s.counters.responses.ESME_ROK, 4);
    assert.equal(s.counters.receiptsUnmatched, 0);
    assert.equal((await messageFromDb(env.ctx, gsmId)).DateDelivered !== null, true);
  },
);

storeTest(
  'SMPP receipts: DELIVRD → Delivered, UNDELIV → Undelivered (ErrorCode UNDELIV:001, not refunded); matched by the receipted_message_id TLV alone and by the id: text alone',
  { skip },
  async (t) => {
    const env = await setup(t, ['--undeliver', '15551239999', '--receipt-mode', 'tlv']);
    const start = await balanceOf(env.ctx, env.demo.account.id);
    const a = await send(env, { MobilePhone: '+15551230011', Message: 'by TLV' });
    const b = await send(env, { MobilePhone: '+15551239999', Message: 'never arrives' });
    assert.deepEqual(await settle(env.ctx, [a, b]), ['Delivered', 'Undelivered UNDELIV:001']);
    const tlvReceipt = env.smsc.events.find((e) => e.ev === 'receipt')!;
    assert.ok(tlvReceipt);
    env.smsc.command('mode text');
    const c = await send(env, { MobilePhone: '+15551230012', Message: 'by text' });
    const d = await send(env, { MobilePhone: '+15551239999', Message: 'by text, undelivered' });
    assert.deepEqual(await settle(env.ctx, [c, d]), ['Delivered', 'Undelivered UNDELIV:001']);
    assert.equal(await balanceOf(env.ctx, env.demo.account.id), start - 4, 'Undelivered is not refunded');
    assert.equal(env.carrier.status().counters.receipts, 4);
  },
);

test(
  'SMPP receipts: one that arrives before the Sent is committed is held and applied again until it lands; one that never matches is dropped after the hold and counted',
  { skip },
  async () => {
    const smsc = await FakeSmsc.start(['--receipt-delay-ms', '0']);
    const applied: Receipt[] = [];
    let committed = false;
    let firstId = '';
    const sink: CarrierSink = {
      receipt: (r) => {
        applied.push(r);
        return Promise.resolve();
      },
      inbound: async () => {},
    };
    const carrier = createSmppCarrier({
      url: `smpp://x:y@127.0.0.1:${smsc.port}`,
      ...FAST,
      receiptHoldMs: 600,
      receiptLanded: (id) => Promise.resolve(committed && id === firstId),
    } as SmppCarrierOptions);
    try {
      await carrier.start(sink);
      const r = await carrier.submit({
        id: 1,
        accountId: 1,
        from: SHORT,
        to: '15551230021',
        text: 'early receipt',
        typeId: 1,
        segments: 1,
        attempt: 1,
      });
      assert.equal(r.kind, 'accepted');
      firstId = (r as { carrierMessageId: string }).carrierMessageId;
      await until('the first application', () => applied.length >= 1);
      await new Promise((res) => setTimeout(res, 120));
      assert.ok(applied.length >= 2, 'applied again while the Sent is not committed');
      committed = true;
      const n = applied.length;
      await new Promise((res) => setTimeout(res, 700));
      assert.ok(applied.length <= n + 1, 'no more once it has landed');
      assert.equal(carrier.status().counters.receiptsHeld, 1);
      assert.equal(carrier.status().counters.receiptsUnmatched, 0);
      assert.ok(applied.filter((x) => x.carrierMessageId === firstId).length === applied.length);
      assert.ok(
        applied.every((x) => x.carrierMessageId === (r as { carrierMessageId: string }).carrierMessageId && x.status === 'delivered'),
      );
      // A receipt for an id no message has: held for the 600 ms, then dropped and counted.
      assert.equal(
        (await carrier.submit({ id: 3, accountId: 1, from: SHORT, to: '15551230022', text: 'orphan', typeId: 1, segments: 1, attempt: 1 }))
          .kind,
        'accepted',
      );
      await until('the orphan receipt to be given up', () => carrier.status().counters.receiptsUnmatched === 1, 10_000);
      assert.equal(carrier.status().heldReceipts, 0);
      assert.deepEqual(
        await carrier.submit({ id: 2, accountId: 1, from: SHORT, to: '15551230021', text: 'mms', typeId: 2, segments: 1, attempt: 1 }),
        { kind: 'failed', errorCode: 'NO_MMS_ROUTE' },
      );
    } finally {
      await carrier.stop();
      await smsc.kill();
    }
  },
);

storeTest(
  'SMPP inbound through the SMSC runs API.md §11.5: STOP opts the sender out with one free confirmation sent back over SMPP; a keyword in two concatenated parts is joined and gets its autoreply',
  { skip },
  async (t) => {
    const env = await setup(t, []);
    const reserve = await call(env.ctx.app, {
      method: 'POST',
      path: '/v1/keyword/reserve',
      token: env.demo.token,
      body: { Keyword: 'JOIN', Number: SHORT, AutoreplyMessage: 'Welcome to the club' },
    });
    assert.equal(reserve.statusCode, 201, reserve.body);
    const inbound = async (from: string) =>
      env.ctx.store.db
        .selectFrom('messages')
        .select(['message', 'status_id'])
        .where('account_id', '=', env.demo.account.id)
        .where('mobile_phone', '=', from)
        .where('direction', '=', 2)
        .execute();

    env.smsc.command('inbound 15551230031 55155 STOP');
    await until('the STOP confirmation to reach the SMSC', () => env.smsc.submits().some((e) => e.dst === '15551230031'));
    assert.deepEqual(await inbound('15551230031'), [{ message: 'STOP', status_id: 7 }]);
    const contact = await env.ctx.store.db
      .selectFrom('contacts')
      .select('opted_out')
      .where('account_id', '=', env.demo.account.id)
      .where('number', '=', '15551230031')
      .executeTakeFirstOrThrow();
    assert.equal(contact.opted_out, 1);
    const confirmation = env.smsc.submits().find((e) => e.dst === '15551230031')!;
    assert.equal(
      Buffer.from(confirmation.sm_hex, 'hex').toString('latin1'),
      STOP_REPLY,
      'GSM text of plain ASCII letters: the same octets',
    );
    assert.equal(confirmation.src, SHORT);

    env.smsc.command('inbound-concat 15551230032 55155 77 JOIN the club, |please');
    await until('the autoreply to reach the SMSC', () => env.smsc.submits().some((e) => e.dst === '15551230032'));
    assert.deepEqual(
      await inbound('15551230032'),
      [{ message: 'JOIN the club, please', status_id: 7 }],
      'the two parts joined before API.md §11.5 saw them',
    );
    assert.equal(
      Buffer.from(env.smsc.submits().find((e) => e.dst === '15551230032')!.sm_hex, 'hex').toString('latin1'),
      'Welcome to the club',
    );

    env.smsc.command('inbound-ucs2 15551230033 55155 Привет');
    await until('the UCS-2 text', async () => (await inbound('15551230033')).length === 1);
    assert.deepEqual(await inbound('15551230033'), [{ message: 'Привет', status_id: 7 }]);
    assert.equal(env.carrier.status().counters.inbound, 3);
    const acksOf = () => env.smsc.events.filter((e) => e.ev === 'deliver_sm_resp');
    await until('four deliver_sm_resp', () => acksOf().length >= 4);
    const acks = acksOf();
    assert.ok(acks.length >= 4 && acks.every((e) => e.status === 0), `every deliver_sm answered ESME_ROK: ${JSON.stringify(acks)}`);
  },
);

storeTest(
  'SMPP throttling: ESME_RTHROTTLED ×3 and ESME_RMSGQFUL ×2 back off and retry, then the message is Sent and Delivered (one credit, no attempt lost)',
  { skip },
  async (t) => {
    const env = await setup(t, ['--throttle', '3']);
    const start = await balanceOf(env.ctx, env.demo.account.id);
    const a = await send(env, { MobilePhone: '+15551230041', Message: 'throttled first' });
    assert.deepEqual(await settle(env.ctx, [a]), ['Delivered']);
    env.smsc.command('throttle 2 0x14');
    const b = await send(env, { MobilePhone: '+15551230042', Message: 'queue full first' });
    assert.deepEqual(await settle(env.ctx, [b]), ['Delivered']);
    const statuses = (d: string) =>
      env.smsc
        .submits()
        .filter((e) => e.dst === d)
        .map((e) => e.status);
    assert.deepEqual(statuses('15551230041'), [0x58, 0x58, 0x58, 0]);
    assert.deepEqual(statuses('15551230042'), [0x14, 0x14, 0]);
    const c = env.carrier.status().counters;
    assert.deepEqual([c.responses.ESME_RTHROTTLED, c.responses.ESME_RMSGQFUL, c.responses.ESME_ROK], [3, 2, 2]);
    const attempts = await env.ctx.store.db.selectFrom('messages').select('attempts').where('id', 'in', [a, b]).execute();
    assert.deepEqual(
      attempts.map((r) => r.attempts),
      [1, 1],
      'retried inside the carrier: one dispatcher attempt each',
    );
    assert.equal(await balanceOf(env.ctx, env.demo.account.id), start - 2);
  },
);

storeTest(
  'SMPP permanent error: ESME_RINVDSTADR for a destination → Failed with the status name as ErrorCode, credits refunded; others go on',
  { skip },
  async (t) => {
    const env = await setup(t, ['--fail', '15551230051=0x0b']);
    const start = await balanceOf(env.ctx, env.demo.account.id);
    const bad = await send(env, { MobilePhone: '+15551230051', Message: 'x'.repeat(200) });
    const good = await send(env, { MobilePhone: '+15551230052', Message: 'fine' });
    assert.deepEqual(await settle(env.ctx, [bad, good]), ['Failed ESME_RINVDSTADR', 'Delivered']);
    assert.equal(
      await balanceOf(env.ctx, env.demo.account.id),
      start - 1,
      'the Failed two-part message is refunded; the delivered one paid',
    );
    assert.equal(env.smsc.submits().filter((e) => e.dst === '15551230051').length, 1, 'one try, not retried');
  },
);

storeTest('SMPP over TLS (smpps://) through stunnel4: bind, submit, receipt', { skip }, async (t) => {
  let tunnel: Awaited<ReturnType<typeof startStunnel>> | undefined;
  const smsc = await FakeSmsc.start([]);
  try {
    tunnel = await startStunnel(smsc.port);
    const ctx = await buildTestApp(undefined, { MSGSVC_DISPATCH_POLL_MS: '10' });
    const demo = await ctx.seed();
    const carrier = createSmppCarrier({
      url: `smpps://tls:pw@127.0.0.1:${tunnel.port}`,
      ...FAST,
      tls: { ca: tunnel.ca },
    } as SmppCarrierOptions);
    const dispatcher = createDispatcher(ctx.config, ctx.store, { carrier });
    await dispatcher.start();
    try {
      assert.equal(carrier.status().state, 'bound');
      assert.equal(carrier.name, `smpps://127.0.0.1:${tunnel.port}`);
      const res = await call(ctx.app, {
        method: 'POST',
        path: '/v1/sms/send',
        token: demo.token,
        body: { Number: SHORT, MobilePhone: '+15551230061', Message: 'over TLS' },
      });
      assert.equal(res.statusCode, 201, res.body);
      const id = (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
      assert.deepEqual(await settle(ctx, [id]), ['Delivered']);
      assert.equal(smsc.submits().at(-1)!.sm_hex, Buffer.from('over TLS').toString('hex'));
      assert.equal(smsc.events.find((e) => e.ev === 'bind')!.system_id, 'tls');
    } finally {
      await dispatcher.stop();
      await ctx.close();
    }
  } finally {
    await tunnel?.stop();
    await smsc.kill();
  }
  t.diagnostic('TLS terminated by stunnel4, certificate checked against its own CA');
});
