/**
 * `X-Twilio-Signature` checked against Twilio's own code: the official `twilio` package signs
 * (`getExpectedTwilioSignature`) and ours verifies, and ours signs and the package verifies
 * (`validateRequest`), over many random parameter sets (unicode, repeated names, empty values).
 * Plus the pure readers of the callbacks' forms (src/carriers/callbacks.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import twilio from 'twilio';
import { twilioSignature, verifyTwilioSignature, type TwilioParams } from '../../src/carriers/twilio-signature.ts';
import {
  INBOUND_REPLY_BODY,
  INBOUND_REPLY_CONTENT_TYPE,
  parseFormBody,
  parseInboundCallback,
  parseStatusCallback,
} from '../../src/carriers/callbacks.ts';

const token = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 });
const name = fc.oneof(
  fc.constantFrom('MessageSid', 'MessageStatus', 'ErrorCode', 'From', 'To', 'Body', 'MediaUrl0', 'a', 'A', 'é', '😀'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
);
const value = fc.string({ unit: 'grapheme', maxLength: 30 });
// A repeated name carries an array of values (possibly with duplicates), as a parsed form gives it.
const params = fc
  .dictionary(name, fc.oneof({ weight: 3, arbitrary: value }, { weight: 1, arbitrary: fc.array(value, { minLength: 2, maxLength: 4 }) }), {
    maxKeys: 8,
  })
  .map((d) => ({ ...d }));
const url = fc.oneof(
  fc.constantFrom(
    'https://sms.example.com/v1/carriers/twilio/status',
    'http://127.0.0.1:8080/v1/carriers/tw-1/inbound',
    'https://sms.example.com:8443/base/v1/carriers/x/status',
  ),
  fc.webUrl({ withQueryParameters: true }),
);

test('the official twilio package signs, ours verifies: the same signature for any parameters', () => {
  fc.assert(
    fc.property(token, url, params, (t, u, p) => {
      const theirs = twilio.getExpectedTwilioSignature(t, u, p as Record<string, string>);
      assert.equal(twilioSignature(t, u, p), theirs);
      assert.equal(verifyTwilioSignature(t, u, p, theirs), true);
    }),
    { numRuns: 1000 },
  );
});

test('ours signs, the official validateRequest accepts; a changed token, URL or field is refused by both', () => {
  fc.assert(
    fc.property(token, url, params, name, value, (t, u, p, k, v) => {
      const ours = twilioSignature(t, u, p);
      assert.equal(twilio.validateRequest(t, ours, u, p as Record<string, string>), true);
      // A change of what is signed: a repeated name whose distinct values are just `v` (["", ""]
      // against "") signs the same as `v` alone, so it is changed to another value.
      const old = p[k];
      const same = typeof old === 'string' ? old === v : Array.isArray(old) && old.every((x) => x === v);
      const changed = { ...p, [k]: same ? `${v}x` : v };
      assert.equal(verifyTwilioSignature(t, u, changed, ours), false);
      assert.equal(twilio.validateRequest(t, ours, u, changed as Record<string, string>), false);
      assert.equal(verifyTwilioSignature(`${t}x`, u, p, ours), false);
      assert.equal(verifyTwilioSignature(t, `${u}x`, p, ours), false);
    }),
    { numRuns: 500 },
  );
});

test('repeated names: every distinct value counts, sorted, whatever order they came in', () => {
  const u = 'https://sms.example.com/v1/carriers/twilio/inbound';
  const a = { MediaUrl: ['https://b.example/2', 'https://a.example/1'], Body: 'x' };
  const b = { Body: 'x', MediaUrl: ['https://a.example/1', 'https://b.example/2', 'https://a.example/1'] };
  assert.equal(twilioSignature('tok', u, a), twilioSignature('tok', u, b));
  assert.equal(twilioSignature('tok', u, a), twilio.getExpectedTwilioSignature('tok', u, a));
  assert.notEqual(twilioSignature('tok', u, a), twilioSignature('tok', u, { Body: 'x', MediaUrl: 'https://a.example/1' }));
  // The published example of Twilio's docs ("Validating Signatures from Twilio").
  const docsUrl = 'https://example.com/myapp.php?foo=1&bar=2';
  const docsParams = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
  assert.equal(twilioSignature('12345', docsUrl, docsParams), twilio.getExpectedTwilioSignature('12345', docsUrl, docsParams));
});

test('the URL with its port, or with the default port added, verifies as the official validator does', () => {
  const p = { MessageSid: 'SM1', MessageStatus: 'delivered' };
  const signedWithout = twilio.getExpectedTwilioSignature('tok', 'https://sms.example.com/v1/carriers/t/status', p);
  assert.equal(verifyTwilioSignature('tok', 'https://sms.example.com:443/v1/carriers/t/status', p, signedWithout), true);
  const signedWith = twilio.getExpectedTwilioSignature('tok', 'https://sms.example.com:443/v1/carriers/t/status', p);
  assert.equal(verifyTwilioSignature('tok', 'https://sms.example.com/v1/carriers/t/status', p, signedWith), true);
  assert.equal(verifyTwilioSignature('tok', 'https://sms.example.com/v1/carriers/t/Status', p, signedWithout), false, 'the path is exact');
  assert.equal(verifyTwilioSignature('tok', 'http://sms.example.com/v1/carriers/t/status', p, signedWithout), false, 'the scheme is exact');
});

test('verification never throws: bad headers, tokens, URLs and parameter shapes give false', () => {
  const good = twilioSignature('tok', 'https://x.example/s', { a: '1' });
  for (const header of [
    undefined,
    '',
    ' ',
    `${good} `,
    good.toLowerCase(),
    'not base64 at all!',
    ['a', 'b'],
    good.slice(0, -1),
  ] as unknown[]) {
    assert.equal(verifyTwilioSignature('tok', 'https://x.example/s', { a: '1' }, header as string), false, String(header));
  }
  for (const [t, u, p] of [
    ['', 'https://x.example/s', { a: '1' }],
    ['tok', 42, { a: '1' }],
    ['tok', 'https://x.example/s', null],
    [null, 'https://x.example/s', {}],
    ['tok', 'no scheme', { a: '1' }],
  ] as unknown[][]) {
    assert.doesNotThrow(() => verifyTwilioSignature(t as string, u as string, p as TwilioParams, good));
    assert.equal(verifyTwilioSignature(t as string, u as string, p as TwilioParams, good), false);
  }
  fc.assert(
    fc.property(fc.anything(), fc.anything(), fc.anything(), fc.anything(), (t, u, p, h) => {
      assert.equal(typeof verifyTwilioSignature(t as string, u as string, p as TwilioParams, h as string), 'boolean');
    }),
  );
});

test('parseFormBody: repeated names kept in order, + is a space, bad escapes are malformed, never a throw', () => {
  assert.deepEqual(
    { ...(parseFormBody('MessageSid=SM1&Body=Hello+world%21&MediaUrl=a&MediaUrl=b&MediaUrl=c&Empty=&Flag') as object) },
    {
      MessageSid: 'SM1',
      Body: 'Hello world!',
      MediaUrl: ['a', 'b', 'c'],
      Empty: '',
      Flag: '',
    },
  );
  assert.deepEqual({ ...(parseFormBody(Buffer.from('Body=%E2%9C%93&&To=%2B1555')) as object) }, { Body: '✓', To: '+1555' });
  assert.deepEqual({ ...(parseFormBody('') as object) }, {});
  for (const bad of ['Body=%E2%9C', 'Body=%zz', '=value', 'a=1&%ff=2', Buffer.from([0x42, 0x3d, 0xff, 0xfe])])
    assert.equal(parseFormBody(bad), 'malformed', String(bad));
  assert.equal(Object.getPrototypeOf(parseFormBody('__proto__=x')), null, 'no prototype to pollute');
  fc.assert(fc.property(fc.string({ maxLength: 200 }), (s) => void parseFormBody(s)));
  // Whatever URLSearchParams writes, we read back the same (what a provider sends is standard form encoding).
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 20 })), {
        maxLength: 6,
      }),
      (pairs) => {
        // A Map, not an object literal: names such as `valueOf` or `__proto__` are ordinary form names.
        const expected = new Map<string, string | string[]>();
        for (const [k, v] of pairs) {
          const prev = expected.get(k);
          expected.set(k, prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]);
        }
        assert.deepEqual({ ...(parseFormBody(new URLSearchParams(pairs).toString()) as object) }, Object.fromEntries(expected));
      },
    ),
  );
});

test('status callbacks: delivered, undelivered/failed with and without ErrorCode, other statuses ignored', () => {
  assert.deepEqual(parseStatusCallback({ MessageSid: 'SM1', MessageStatus: 'delivered' }), {
    kind: 'receipt',
    receipt: { carrierMessageId: 'SM1', status: 'delivered', errorCode: '' },
  });
  assert.deepEqual(parseStatusCallback({ MessageSid: 'SM1', MessageStatus: 'undelivered', ErrorCode: '30005' }), {
    kind: 'receipt',
    receipt: { carrierMessageId: 'SM1', status: 'undelivered', errorCode: 'TWILIO_30005' },
  });
  assert.deepEqual(parseStatusCallback({ MessageSid: 'SM1', MessageStatus: 'failed', ErrorCode: '' }), {
    kind: 'receipt',
    receipt: { carrierMessageId: 'SM1', status: 'undelivered', errorCode: 'UNDELIV' },
  });
  assert.deepEqual(parseStatusCallback({ MessageSid: 'SM1', MessageStatus: 'failed' }), {
    kind: 'receipt',
    receipt: { carrierMessageId: 'SM1', status: 'undelivered', errorCode: 'UNDELIV' },
  });
  for (const s of [
    'queued',
    'sending',
    'sent',
    'accepted',
    'scheduled',
    'read',
    'receiving',
    'received',
    'canceled',
    'partially_delivered',
  ]) {
    assert.deepEqual(parseStatusCallback({ MessageSid: 'SM1', MessageStatus: s }), { kind: 'ignore', status: s });
  }
  assert.equal(parseStatusCallback({ MessageStatus: 'delivered' }).kind, 'malformed');
  assert.equal(parseStatusCallback({ MessageSid: 'SM1' }).kind, 'malformed');
  assert.equal(
    parseStatusCallback({ MessageSid: ['SM1', 'SM2'], MessageStatus: 'delivered' }).kind,
    'receipt',
    'a repeated field: its first value',
  );
});

test('inbound callbacks: From and To as digits, Body as the text, others ignored; the TwiML reply constant', () => {
  assert.deepEqual(
    parseInboundCallback({
      MessageSid: 'SM9',
      From: '+447700900123',
      To: '+15550100001',
      Body: ' STOP ',
      NumMedia: '0',
      FromCountry: 'GB',
    }),
    {
      kind: 'inbound',
      messageSid: 'SM9',
      from: '447700900123',
      to: '15550100001',
      text: ' STOP ',
    },
  );
  assert.deepEqual(parseInboundCallback({ MessageSid: 'SM9', From: '+447700900123', To: '46645' }), {
    kind: 'inbound',
    messageSid: 'SM9',
    from: '447700900123',
    to: '46645',
    text: '',
  });
  for (const bad of [
    { From: '+1555', To: '+1556' },
    { MessageSid: 'SM1', From: 'whatsapp:+1555', To: '+1556' },
    { MessageSid: 'SM1', From: '+1555' },
    { MessageSid: 'SM1', From: '+1 555', To: '+1556' },
  ] as TwilioParams[]) {
    assert.equal(parseInboundCallback(bad).kind, 'malformed', JSON.stringify(bad));
  }
  assert.equal(INBOUND_REPLY_BODY, '<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
  assert.equal(INBOUND_REPLY_CONTENT_TYPE, 'text/xml');
});
