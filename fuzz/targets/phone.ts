/**
 * Phone numbers (docs/API.md §2.2): `normalisePhone` reads every number a request or an import
 * names, in the account's region.
 *
 * Oracle: no throw; the result is null or an E.164 number (`+`, a non-zero digit, then up to 18
 * more: libphonenumber's possible lengths reach 17 national digits in Japan, past E.164's 15; `digits`
 * the same without `+`) with a calling code `callingCodeOf` knows (from 7 digits on); and normalising is idempotent: the
 * E.164 form read again, in any region, gives itself.
 */
import fc from 'fast-check';
import type { CountryCode } from 'libphonenumber-js';
import { callingCodeOf, normalisePhone } from '../../src/domain/phone.ts';
import { check, type FuzzTarget } from '../target.ts';

const REGIONS: readonly CountryCode[] = ['US', 'GB', 'DE', 'FR', 'IN', 'AU', 'BR', 'NG', 'JP', 'CA', 'IT', 'RU'];
const digit = fc.constantFrom('0', '1', '2', '3', '4', '5', '6', '7', '8', '9');
const sep = fc.constantFrom('', ' ', '-', '.', '(', ')', '/', '\u00a0', '\t', 'x', 'ext.', '#', '*', '\uff11', '\u0661');
const number = fc
  .tuple(fc.constantFrom('', '+', '00', '011', '+1', '+44', '0', '+0', '++', '(+'), fc.array(fc.tuple(sep, digit), { maxLength: 18 }))
  .map(([prefix, parts]) => prefix + parts.map(([s, d]) => s + d).join(''));
type Input = { raw: string; region: string };

export const target: FuzzTarget<Input> = {
  name: 'phone',
  oracle:
    'no throw; null or E.164-shaped (+, up to 19 digits, a known calling code); normalising the E.164 again gives itself in any region',
  files: ['src/domain/phone.ts'],
  arbitrary: fc.record({ raw: fc.oneof(number, fc.string({ maxLength: 30 })), region: fc.constantFrom(...REGIONS) }),
  dictionary: ['+1', '+44', '00', '555', '0123', ' ', '-', '(', ')', 'ext', '+'],
  run({ raw, region }) {
    const regionCode = (REGIONS.includes(region as CountryCode) ? region : 'US') as CountryCode;
    const n = normalisePhone(raw, regionCode);
    if (n === null) return;
    check(/^\+[1-9][0-9]{1,18}$/.test(n.e164) && n.digits === n.e164.slice(1), `not E.164: ${JSON.stringify(n)}`);
    // Shorter numbers are short codes to callingCodeOf (docs/API.md §17); Germany has 6-digit ones.
    if (n.digits.length >= 7) check(callingCodeOf(n.digits) !== undefined, `no calling code: ${n.e164}`);
    for (const other of [regionCode, 'GB' as CountryCode]) {
      const again = normalisePhone(n.e164, other);
      check(again !== null && again.e164 === n.e164, `not idempotent: ${JSON.stringify(raw)} → ${n.e164} → ${JSON.stringify(again)}`);
    }
  },
};
