/**
 * The console's counter (console/src/cost.ts) and the server agree: each string is sent through
 * sms/send and the Segments and Credits the server charged are what the console showed while typing,
 * at the GSM-7 and UCS-2 boundaries (160/161, 70/71), with extension characters and astral ones.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textCost } from '../../console/src/cost.ts';
import { buildTestApp, withToken } from '../helpers/app.ts';
import { setBalance } from '../helpers/sms.ts';
import { storeTest } from '../helpers/stores.ts';

const STRINGS = [
  'Hello!',
  'a'.repeat(160),
  'a'.repeat(161),
  'a'.repeat(306),
  'a'.repeat(307),
  '{'.repeat(80),
  '{'.repeat(81),
  'a'.repeat(152) + '€',
  'é'.repeat(70),
  'ж'.repeat(70),
  'ж'.repeat(71),
  'ж'.repeat(134),
  'ж'.repeat(135),
  '😀'.repeat(35),
  '😀'.repeat(36),
  '<img src=x onerror=alert(1)>',
  // docs/API.md §14.3.1: braces escaped as {{ and }}, and merge fields (empty: the recipient below is no contact).
  '{{'.repeat(81),
  '}}{{FirstName}}{Foo}' + 'a'.repeat(150),
  'Hi {FirstName} {Field:Nope}' + 'a'.repeat(157),
  'Line one\nLine two\r\n€ and [brackets] ~ ^ | \\',
];

storeTest('console: the counter and the server count the same segments and credits', { timeout: 60_000 }, async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await setBalance(ctx, demo.account.id, 1_000_000);
  for (const text of STRINGS) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: withToken('/v1/sms/send', demo.token),
      payload: { MobilePhone: '+1 202 555 0188', Message: text },
    });
    assert.equal(res.statusCode, 201, `${JSON.stringify(text)}: ${res.body}`);
    const [message] = res.json();
    const shown = textCost(text);
    assert.equal(Number(message.Segments), shown.segments, `segments of ${JSON.stringify(text)}`);
    assert.equal(Number(message.Credits), shown.credits, `credits of ${JSON.stringify(text)}`);
  }
});

test('console: the counter turns at 160/161 GSM-7 characters and 70/71 UCS-2 ones', () => {
  const plain = { personalised: false };
  assert.deepEqual(textCost('a'.repeat(160)), { encoding: 'GSM-7', segments: 1, credits: 1, units: 160, ...plain });
  assert.deepEqual(textCost('a'.repeat(161)), { encoding: 'GSM-7', segments: 2, credits: 2, units: 161, ...plain });
  assert.deepEqual(textCost('€'.repeat(80)), { encoding: 'GSM-7', segments: 1, credits: 1, units: 160, ...plain });
  assert.deepEqual(textCost('ж'.repeat(70)), { encoding: 'UCS-2', segments: 1, credits: 1, units: 70, ...plain });
  assert.deepEqual(textCost('ж'.repeat(71)), { encoding: 'UCS-2', segments: 2, credits: 2, units: 71, ...plain });
  // docs/API.md §14.3.1: {{ is one brace when sent; a merge field is counted empty and flagged.
  assert.deepEqual(textCost('{{'.repeat(80)), { encoding: 'GSM-7', segments: 1, credits: 1, units: 160, ...plain });
  assert.deepEqual(textCost('Hi {FirstName}'), { encoding: 'GSM-7', segments: 1, credits: 1, units: 3, personalised: true });
});
