/**
 * normalisePhone parses shared calling codes with reduced metadata (a measured hot spot of
 * contacts/find, see src/domain/phone.ts). Its results must be exactly what libphonenumber-js's
 * default entry point gives: the same E.164 number, and "possible" for the same inputs, with one rule
 * of ours on top (docs/API.md §1.7): the number must read back as itself (found by the phone fuzz
 * target: `5550100` in Canada became `+15550100`, which no region reads back; `+440-0131313333`
 * became `+440131313333`, which reads back as `+44131313333`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parsePhoneNumberFromString, getCountries, type CountryCode } from 'libphonenumber-js';
import { normalisePhone } from '../../src/domain/phone.ts';

function reference(raw: string, region: CountryCode) {
  if (raw.length > 64) return null;
  const parsed = parsePhoneNumberFromString(raw, region);
  if (!parsed || !parsed.isPossible()) return null;
  let number = parsed.number;
  if (raw !== number) {
    const again = parsePhoneNumberFromString(number, region);
    if (!again || !again.isPossible()) return null;
    if (again.number !== number) {
      const third = parsePhoneNumberFromString(again.number, region);
      if (!third || third.number !== again.number || !third.isPossible()) return null;
      number = again.number;
    }
  }
  return { e164: number, digits: number.slice(1) };
}

// Calling codes shared by several countries, where the shortcut applies, and a few others.
const CODES = ['1', '7', '39', '44', '47', '61', '212', '262', '290', '358', '590', '599', '33', '49', '86', '91', '800', '882'];
const REGIONS: CountryCode[] = ['US', 'CA', 'JM', 'PR', 'GB', 'JE', 'AU', 'CX', 'FI', 'AX', 'RU', 'KZ', 'IT', 'FR', 'DE', 'SH'];

test('normalisePhone equals libphonenumber-js on international numbers of every length', () => {
  for (const code of CODES) {
    for (let len = 1; len <= 16; len++) {
      for (const lead of '0123456789') {
        const national = (lead + '5550123456789012').slice(0, len);
        for (const raw of [`+${code}${national}`, `+${code} ${national}`, `00${code}${national}`, `${code}${national}`]) {
          for (const region of ['US', 'GB', 'FI'] as CountryCode[]) {
            assert.deepEqual(normalisePhone(raw, region), reference(raw, region), `${raw} in ${region}`);
          }
        }
      }
    }
  }
});

test('normalisePhone equals libphonenumber-js on national numbers in every region', () => {
  for (const region of getCountries()) {
    for (let len = 3; len <= 14; len++) {
      for (const lead of '0123456789') {
        const raw = (lead + '2345678901234').slice(0, len);
        assert.deepEqual(normalisePhone(raw, region), reference(raw, region), `${raw} in ${region}`);
      }
    }
  }
});

test('normalisePhone equals libphonenumber-js on arbitrary text', () => {
  const digits = fc.stringMatching(/^[0-9]{0,16}$/);
  const decorated = fc
    .tuple(
      fc.constantFrom('', '+', '00', '(', '+1 ', '+44 ', '+61-', 'tel:+'),
      digits,
      fc.constantFrom('', ' ', '-', ')', ' ext. 12', 'x9'),
      digits,
    )
    .map(([a, b, c, d]) => `${a}${b}${c}${d}`);
  fc.assert(
    fc.property(fc.oneof(decorated, fc.string({ maxLength: 30 })), fc.constantFrom(...REGIONS), (raw, region) => {
      assert.deepEqual(normalisePhone(raw, region), reference(raw, region));
    }),
    { numRuns: Number(process.env.PHONE_RUNS ?? 20_000) },
  );
});
