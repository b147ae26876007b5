/**
 * Signed, expiring media links (src/lib/signed-link.ts), the `MediaUrl`s of a Twilio MMS:
 * valid ones give the ids, anything altered or expired is forbidden (a link a minute past its
 * expiry on a manual clock), and nothing throws on garbage.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { signMediaLink, verifyMediaLink } from '../../src/lib/signed-link.ts';
import { createManualClock } from '../../src/lib/time.ts';

const SECRET = 'media-link-secret-0123456789abcdef';
const DAY = 86_400;

test('a link issued for 24 hours verifies until its expiry, and is forbidden a minute past it (manual clock)', () => {
  const clock = createManualClock();
  const expires = clock.nowSeconds() + DAY;
  const query = signMediaLink(SECRET, { carrier: 'twilio', accountId: 7, mediaId: 42 }, expires);
  assert.match(query, /^a=7&m=42&e=\d+&s=[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(verifyMediaLink(SECRET, query, clock.nowSeconds(), 'twilio'), { accountId: 7, mediaId: 42 });
  clock.advance((DAY - 1) * 1000);
  assert.deepEqual(verifyMediaLink(SECRET, query, clock.nowSeconds(), 'twilio'), { accountId: 7, mediaId: 42 }, 'a second before expiry');
  clock.advance(1000);
  assert.deepEqual(verifyMediaLink(SECRET, query, clock.nowSeconds(), 'twilio'), { accountId: 7, mediaId: 42 }, 'at the expiry second');
  clock.advance(60_000);
  assert.equal(verifyMediaLink(SECRET, query, clock.nowSeconds(), 'twilio'), 'forbidden', 'a minute past expiry');
});

test('anything altered is forbidden: each field, the signature, the carrier, the secret, encoding, order, extras', () => {
  const now = 1_800_000_000;
  const q = signMediaLink(SECRET, { carrier: 'twilio', accountId: 7, mediaId: 42 }, now + DAY);
  const s = q.slice(q.indexOf('&s=') + 3);
  const altered = [
    q.replace('a=7', 'a=8'),
    q.replace('m=42', 'm=43'),
    q.replace(`e=${now + DAY}`, `e=${now + DAY + 1}`),
    q.replace(`e=${now + DAY}`, `e=0${now + DAY}`),
    q.replace('a=7', 'a=07'),
    q.slice(0, -1) + (q.endsWith('A') ? 'B' : 'A'),
    // The last character of 43 carries 2 unused bits: a sibling character decodes to the same bytes, yet is not the string issued.
    q.slice(0, -1) + String.fromCharCode(q.charCodeAt(q.length - 1) ^ 1),
    q.replace(`s=${s}`, `s=${s}=`),
    q.replace(`s=${s}`, `s=${Buffer.from(s, 'base64url').toString('base64').replace(/=+$/, '')}`),
    q.replace(`s=${s}`, `s=${encodeURIComponent(s).replace(/-/g, '%2D')}`),
    q.replace('a=7', 'a=%37'),
    `m=42&a=7&${q.slice(q.indexOf('e='))}`,
    `${q}&x=1`,
    `${q}&s=${s}`,
    `x=1&${q}`,
    `?${q}`,
    q.toUpperCase(),
    '',
  ];
  for (const a of altered) assert.equal(verifyMediaLink(SECRET, a, now, 'twilio'), 'forbidden', a);
  assert.equal(verifyMediaLink(SECRET, q, now, 'twilio2'), 'forbidden', 'under another carrier');
  assert.equal(verifyMediaLink(`${SECRET}x`, q, now, 'twilio'), 'forbidden', 'another secret');
  assert.equal(verifyMediaLink('', q, now, 'twilio'), 'forbidden', 'an empty secret');
  assert.deepEqual(verifyMediaLink(Buffer.from(SECRET), q, now, 'twilio'), { accountId: 7, mediaId: 42 }, 'the secret as bytes');
});

test('garbage never throws; random alterations are forbidden', () => {
  const now = 1_800_000_000;
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), fc.anything(), fc.anything(), (q, t, c) => {
      assert.equal(verifyMediaLink(SECRET, q, now, 'twilio'), 'forbidden');
      assert.doesNotThrow(() => verifyMediaLink(t as string, q, c as number, c as string));
      assert.doesNotThrow(() => verifyMediaLink(SECRET, t as string, now, 'twilio'));
    }),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 2 ** 40 }),
      fc.integer({ min: 1, max: 2 ** 40 }),
      fc.nat(),
      fc.string({ minLength: 1, maxLength: 1 }),
      (accountId, mediaId, at, ch) => {
        const q = signMediaLink(SECRET, { carrier: 'c', accountId, mediaId }, now + DAY);
        assert.deepEqual(verifyMediaLink(SECRET, q, now, 'c'), { accountId, mediaId });
        const i = at % q.length;
        const altered = q.slice(0, i) + ch + q.slice(i + 1);
        if (altered !== q) assert.equal(verifyMediaLink(SECRET, altered, now, 'c'), 'forbidden', altered);
      },
    ),
  );
});

test('signing refuses a short secret and ids or expiries that are not positive integers', () => {
  assert.throws(() => signMediaLink('short', { carrier: 'c', accountId: 1, mediaId: 1 }, 2_000_000_000), RangeError);
  for (const [accountId, mediaId, e] of [
    [0, 1, 2e9],
    [1, -1, 2e9],
    [1.5, 1, 2e9],
    [1, 1, Number.NaN],
    [1, 1, 0],
  ]) {
    assert.throws(() => signMediaLink(SECRET, { carrier: 'c', accountId: accountId!, mediaId: mediaId! }, e!), RangeError);
  }
});
