/**
 * src/domain/quiet-hours.ts (API.md §14.3.5): one zone for FR, GB, DE (Berlin and Busingen), JP and
 * several for US, CA, MX, BR, RU, AU; the recipient's zone by calling code agrees with
 * libphonenumber's country for every shared code; `quietUntil` (property: held exactly while the
 * local time is inside the window, released at its first instant outside); the zone names.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import parsePhoneNumber from 'libphonenumber-js';
import {
  countryZone,
  inWindow,
  isTimeZoneName,
  localMinute,
  quietCheck,
  quietUntil,
  zoneOfRecipient,
} from '../../src/domain/quiet-hours.ts';

const FROM = Date.UTC(2027, 0, 1);

test('countries of one zone: FR, GB, DE, JP (and AR, IN); of several: US, CA, MX, BR, RU, AU', () => {
  assert.equal(countryZone('FR', FROM), 'Europe/Paris');
  assert.equal(countryZone('GB', FROM), 'Europe/London');
  assert.equal(countryZone('DE', FROM), 'Europe/Berlin', 'Busingen keeps Berlin time');
  assert.equal(countryZone('JP', FROM), 'Asia/Tokyo');
  assert.equal(countryZone('IN', FROM), 'Asia/Kolkata');
  assert.equal(countryZone('AR', FROM), 'America/Argentina/Buenos_Aires', 'twelve zones, one time');
  for (const c of ['US', 'CA', 'MX', 'BR', 'RU', 'AU', 'CN']) assert.equal(countryZone(c, FROM), null, c);
  assert.equal(countryZone('XX', FROM), null, 'no such country');
});

test("the recipient's zone from its number: one-zone countries, several-zone countries, shared codes, none", () => {
  assert.equal(zoneOfRecipient('33612345678', FROM), 'Europe/Paris');
  assert.equal(zoneOfRecipient('447700900123', FROM), 'Europe/London');
  assert.equal(zoneOfRecipient('4915112345678', FROM), 'Europe/Berlin');
  assert.equal(zoneOfRecipient('819012345678', FROM), 'Asia/Tokyo');
  assert.equal(zoneOfRecipient('12025550143', FROM), null, 'US: the account zone');
  assert.equal(zoneOfRecipient('14165550143', FROM), null, 'CA: the account zone');
  assert.equal(zoneOfRecipient('18765550143', FROM), 'America/Jamaica', '+1 876: Jamaica');
  assert.equal(zoneOfRecipient('79161234567', FROM), null, 'RU');
  assert.equal(zoneOfRecipient('5511912345678', FROM), null, 'BR');
  assert.equal(zoneOfRecipient('61412345678', FROM), null, 'AU');
  assert.equal(zoneOfRecipient('80012345678', FROM), null, 'a non-geographic code');
  assert.equal(zoneOfRecipient('', FROM), null);
});

test('property: the zone by calling code is the zone of the country libphonenumber finds, for shared codes', () => {
  const codes = ['1', '7', '39', '44', '47', '61', '212', '262', '290', '358', '590', '599'];
  fc.assert(
    fc.property(fc.constantFrom(...codes), fc.stringMatching(/^[0-9]{6,11}$/), (code, rest) => {
      const digits = code + rest;
      const country = parsePhoneNumber(`+${digits}`)?.country;
      const expected = country === undefined ? null : countryZone(country, FROM);
      const got = zoneOfRecipient(digits, FROM);
      // A number of no country, or of the code's main country, may take the code's shared zone.
      if (got !== expected) assert.ok(country === undefined && expected === null, `${digits}: ${got} vs ${expected} (${country})`);
    }),
    { numRuns: 3000 },
  );
});

test('property: quietUntil holds exactly while the local time is inside, and ends at the first instant outside', () => {
  const zones = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'America/St_Johns', 'Pacific/Chatham'];
  fc.assert(
    fc.property(
      fc.constantFrom(...zones),
      fc.integer({ min: 0, max: 1439 }),
      fc.integer({ min: 0, max: 1439 }),
      fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2028, 11, 31) }),
      (zone, start, end, t) => {
        fc.pre(start !== end);
        const w = { start, end };
        const until = quietUntil(zone, w, t);
        const inside = inWindow(w, localMinute(zone, t));
        if (!inside) return assert.equal(until, null);
        assert.ok(until !== null && until > t && until - t <= 25 * 3_600_000, `until ${until} after ${t}`);
        assert.equal(inWindow(w, localMinute(zone, until)), false, 'outside at the end');
        assert.equal(inWindow(w, localMinute(zone, until - 1)), true, 'inside a millisecond before');
        // Inside all along: sampled every 10 minutes.
        for (let u = t; u < until; u += 600_000) assert.ok(inWindow(w, localMinute(zone, u)));
      },
    ),
    { numRuns: 300 },
  );
});

test('quietUntil: spanning midnight, the exact end, a day the clocks go forward and back', () => {
  const w = { start: 22 * 60, end: 7 * 60 };
  assert.equal(quietUntil('UTC', w, Date.UTC(2027, 0, 1, 21, 59, 59, 999)), null);
  assert.equal(quietUntil('UTC', w, Date.UTC(2027, 0, 1, 22)), Date.UTC(2027, 0, 2, 7));
  assert.equal(quietUntil('UTC', w, Date.UTC(2027, 0, 2, 6, 59, 59, 999)), Date.UTC(2027, 0, 2, 7));
  assert.equal(quietUntil('UTC', w, Date.UTC(2027, 0, 2, 7)), null);
  // New York, 14 March 2027: 02:00 EST → 03:00 EDT (07:00Z).
  assert.equal(quietUntil('America/New_York', w, Date.UTC(2027, 2, 14, 3, 30)), Date.UTC(2027, 2, 14, 11));
  assert.equal(quietUntil('America/New_York', { start: 60, end: 150 }, Date.UTC(2027, 2, 14, 6, 30)), Date.UTC(2027, 2, 14, 7));
  // 7 November 2027: 02:00 EDT → 01:00 EST (06:00Z); 07:00 EST is 12:00Z.
  assert.equal(quietUntil('America/New_York', w, Date.UTC(2027, 10, 7, 3)), Date.UTC(2027, 10, 7, 12));
});

test('isTimeZoneName: IANA zone and link names, exact case, that ICU accepts', () => {
  for (const ok of ['Europe/Paris', 'UTC', 'Etc/UTC', 'Etc/GMT+5', 'Asia/Calcutta', 'Asia/Kolkata', 'US/Eastern', 'Europe/Busingen'])
    assert.equal(isTimeZoneName(ok), true, ok);
  for (const bad of ['', 'utc', 'europe/paris', '+05:00', 'GMT+5', 'Factory', 'Etc/GMT+15', 'Mars/Olympus', ' UTC'])
    assert.equal(isTimeZoneName(bad), false, bad);
});

test('quietCheck: null when no account has hours; the account zone, else the service zone; exempt from nothing else', () => {
  const now = Date.UTC(2027, 0, 12, 3);
  assert.equal(quietCheck([{ account_id: 1, quiet_start: null, quiet_end: null, time_zone: 'Asia/Tokyo' }], 'UTC', now), null);
  const check = quietCheck(
    [
      { account_id: 1, quiet_start: '22:00', quiet_end: '07:00', time_zone: 'America/New_York' },
      { account_id: 2, quiet_start: '02:00', quiet_end: '04:00', time_zone: null },
    ],
    'UTC',
    now,
  )!;
  assert.equal(check(1, '12025550143'), Date.UTC(2027, 0, 12, 12));
  assert.equal(check(1, '819012345678'), null, 'noon in Tokyo');
  assert.equal(check(2, '12025550143'), Date.UTC(2027, 0, 12, 4), 'the service zone (UTC)');
  assert.equal(check(3, '12025550143'), null, 'an account without settings');
});
