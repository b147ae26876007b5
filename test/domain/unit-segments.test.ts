/**
 * Cost of a message (API.md §11.1): GSM-7 160 / 153 per segment, extension characters
 * counting two, UCS-2 70 / 67, an MMS at its own price; both prices are settings. And the
 * injected clock (issue 11: tests move time instead of sleeping).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SegmentedMessage } from 'sms-segments-calculator';
import { GSM7_BASIC, messageCost, smsSegments } from '../../src/domain/segments.ts';
import { createManualClock, systemClock } from '../../src/lib/time.ts';
import { loadConfig } from '../../src/config.ts';

const PRICES = { smsSegmentCredits: 1, mmsCredits: 3 };

test('GSM-7: 160 characters in one segment, 153 per segment beyond', () => {
  const cases: [number, number][] = [
    [1, 1],
    [160, 1],
    [161, 2],
    [306, 2],
    [307, 3],
    [459, 3],
    [460, 4],
    [1600, 11],
  ];
  for (const [length, segments] of cases) {
    assert.deepEqual(smsSegments('a'.repeat(length)), { encoding: 'GSM-7', segments }, `${length} characters`);
  }
  // The GSM basic table's accented letters and symbols are GSM-7 too.
  assert.deepEqual(smsSegments('é'.repeat(160)), { encoding: 'GSM-7', segments: 1 });
  assert.deepEqual(smsSegments('£¥èùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ!"#¤%&\'()*+,-./:;<=>?¡ÄÖÑÜ§¿äöñüà@$\n\r'), { encoding: 'GSM-7', segments: 1 });
});

test('GSM-7 extension table: each character counts two, and an escape pair is never split', () => {
  for (const ch of ['€', '[', ']', '{', '}', '\\', '^', '~', '|']) {
    assert.deepEqual(smsSegments(ch.repeat(80)), { encoding: 'GSM-7', segments: 1 }, `80 × ${ch} = 160 septets`);
    assert.deepEqual(smsSegments(ch.repeat(81)), { encoding: 'GSM-7', segments: 2 }, `81 × ${ch} = 162 septets`);
  }
  assert.equal(smsSegments('a'.repeat(158) + '€').segments, 1, '158 + 2 = 160 septets');
  assert.equal(smsSegments('a'.repeat(159) + '€').segments, 2, '159 + 2 = 161 septets');
  // 152 + an escape pair: the pair does not fit in the first 153-septet segment, so it moves whole.
  assert.equal(smsSegments('a'.repeat(152) + '€' + 'a'.repeat(153)).segments, 3);
});

test('UCS-2: any other character; 70 in one segment, 67 per segment beyond; an emoji counts two', () => {
  const cases: [number, number][] = [
    [70, 1],
    [71, 2],
    [134, 2],
    [135, 3],
  ];
  for (const [length, segments] of cases) {
    assert.deepEqual(smsSegments('ж'.repeat(length)), { encoding: 'UCS-2', segments }, `${length} characters`);
  }
  assert.deepEqual(smsSegments('a'.repeat(69) + 'ç'), { encoding: 'UCS-2', segments: 1 }, 'ç is not in the GSM table');
  assert.deepEqual(smsSegments('a'.repeat(70) + 'ю'), { encoding: 'UCS-2', segments: 2 });
  assert.deepEqual(smsSegments('😀'.repeat(35)), { encoding: 'UCS-2', segments: 1 });
  assert.deepEqual(smsSegments('😀'.repeat(36)), { encoding: 'UCS-2', segments: 2 });
});

test('credits: SMS segments × the segment price, MMS the MMS price; both are settings', () => {
  assert.deepEqual(messageCost(1, 'a'.repeat(161), PRICES), { encoding: 'GSM-7', segments: 2, credits: 2 });
  assert.deepEqual(messageCost(1, 'a'.repeat(161), { smsSegmentCredits: 5, mmsCredits: 3 }), {
    encoding: 'GSM-7',
    segments: 2,
    credits: 10,
  });
  assert.deepEqual(messageCost(2, 'a'.repeat(500), PRICES), { encoding: undefined, segments: 1, credits: 3 });
  assert.deepEqual(messageCost(2, '', { smsSegmentCredits: 1, mmsCredits: 7 }), { encoding: undefined, segments: 1, credits: 7 });
  const defaults = loadConfig({});
  assert.equal(defaults.smsSegmentCredits, 1);
  assert.equal(defaults.mmsCredits, 3);
  const set = loadConfig({ MSGSVC_SMS_SEGMENT_CREDITS: '4', MSGSVC_MMS_CREDITS: '9' });
  assert.equal(set.smsSegmentCredits, 4);
  assert.equal(set.mmsCredits, 9);
  assert.throws(() => loadConfig({ MSGSVC_MMS_CREDITS: '-1' }), /MSGSVC_MMS_CREDITS/);
  assert.throws(() => loadConfig({ MSGSVC_CARRIER: 'smpp-someday' }), /MSGSVC_CARRIER/);
  assert.equal(loadConfig({}).dispatcher, true);
  assert.equal(loadConfig({ MSGSVC_DISPATCHER: '0' }).dispatcher, false);
});

test('clock: the manual clock moves only when told to; the system clock is Date.now', () => {
  const clock = createManualClock(1_800_000_000_500);
  assert.equal(clock.nowMs(), 1_800_000_000_500);
  assert.equal(clock.nowSeconds(), 1_800_000_000);
  clock.advance(499);
  assert.equal(clock.nowSeconds(), 1_800_000_000);
  clock.advance(1);
  assert.equal(clock.nowSeconds(), 1_800_000_001);
  assert.throws(() => clock.advance(-1), RangeError);
  clock.set(0);
  assert.equal(clock.nowMs(), 0);
  const start = createManualClock();
  assert.equal(start.nowMs() % 1000, 0, 'starts on a whole second');
  const before = Date.now();
  const now = systemClock.nowMs();
  assert.ok(now >= before && now <= Date.now());
  assert.equal(systemClock.nowSeconds(), Math.floor(Date.now() / 1000));
});

test("the GSM-7 basic-table shortcut gives exactly the library's encoding and count (any length, every basic character, near the boundaries)", () => {
  // Every character the shortcut accepts, one by one: the library must call it GSM-7, one septet.
  const basic =
    '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
  for (const ch of basic) {
    assert.ok(GSM7_BASIC.test(ch), JSON.stringify(ch));
    const m = new SegmentedMessage(ch, 'auto', false);
    assert.equal(m.encodingName, 'GSM-7', JSON.stringify(ch));
    assert.equal(m.numberOfCharacters, 1, JSON.stringify(ch));
  }
  // Extension characters and ESC are not taken by the shortcut.
  for (const ch of '^{}\\[~]|€\f\u001b`') assert.ok(!GSM7_BASIC.test(ch), JSON.stringify(ch));
  const library = (text: string) => {
    const m = new SegmentedMessage(text, 'auto', false);
    return { encoding: m.encodingName, segments: Math.max(1, m.segmentsCount) };
  };
  fc.assert(
    fc.property(
      fc
        .oneof(fc.integer({ min: 0, max: 1000 }), fc.constantFrom(0, 1, 153, 154, 159, 160, 161, 306, 307, 459, 460))
        .chain((n) => fc.array(fc.constantFrom(...basic), { minLength: n, maxLength: n }).map((cs) => cs.join(''))),
      (text) => assert.deepEqual(smsSegments(text), library(text)),
    ),
    { numRuns: 300 },
  );
});
