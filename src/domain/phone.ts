import parsePhoneNumber, { Metadata, type CountryCode, type MetadataJson } from 'libphonenumber-js/core';
// The metadata the package's default entry point (`libphonenumber-js`) uses.
import metadata from 'libphonenumber-js/min/metadata';

/**
 * Why two metadata sets (a measured hot spot of contacts/find): when several countries share a
 * calling code (+1: the US and 24 others), libphonenumber works out which one a number belongs to
 * by matching it against every country's number-type patterns, which costs more than the rest of
 * the lookup. The country matters to our result (the E.164 form and `isPossible()`) only through
 * length checks against that country's possible lengths: whether a stripped national prefix stays
 * stripped, and whether the final number is possible. So a number written with `+` is first parsed
 * with metadata in which each shared calling code names only its main country, and that result is
 * kept only when the countries of the code agree on every length check it could have involved;
 * anything else (national formats, lengths the countries disagree on, prefix rules other than a
 * plain digit string) is parsed with the package's own metadata, as before. Either way the result
 * is exactly the package's (test/domain/perf-phone.test.ts).
 */
const mainCountryOnly: MetadataJson = { ...metadata, country_calling_codes: { ...metadata.country_calling_codes } };
/** Per shared calling code: the main plan's national prefix length, and the disputed lengths. */
const sharedCodes = new Map<string, { prefixLength: number | undefined; disputed: Set<number> }>();
{
  type Check = 'IS_POSSIBLE' | 'TOO_SHORT' | 'TOO_LONG' | 'INVALID_LENGTH';
  // libphonenumber's checkNumberLength over a plan's possible lengths (sorted, as in the metadata).
  const check = (lengths: number[], n: number): Check =>
    lengths.includes(n) ? 'IS_POSSIBLE' : n < lengths[0]! ? 'TOO_SHORT' : n > lengths[lengths.length - 1]! ? 'TOO_LONG' : 'INVALID_LENGTH';
  const m = new Metadata(metadata);
  for (const [code, countries] of Object.entries(metadata.country_calling_codes)) {
    if (countries.length < 2) continue;
    const plans = countries.map((country) => {
      m.selectNumberingPlan(country);
      const plan = m.numberingPlan as unknown as {
        possibleLengths(): number[];
        nationalPrefixForParsing(): string | undefined;
        nationalPrefixTransformRule(): string | undefined;
      };
      return { lengths: plan.possibleLengths(), prefix: plan.nationalPrefixForParsing(), transform: plan.nationalPrefixTransformRule() };
    });
    const disputed = new Set<number>();
    for (let n = 1; n <= 20; n++) {
      const results = plans.map((p) => check(p.lengths, n));
      const possible = results.map((r) => r === 'IS_POSSIBLE');
      const incomplete = results.map((r) => r !== 'TOO_SHORT' && r !== 'INVALID_LENGTH');
      if (possible.some((x) => x !== possible[0]) || incomplete.some((x) => x !== incomplete[0])) disputed.add(n);
    }
    const main = plans[0]!;
    // Only a plain digit prefix without a transform rule has a known length; otherwise never shortcut.
    const prefixLength = main.prefix === undefined ? 0 : /^\d+$/.test(main.prefix) && !main.transform ? main.prefix.length : undefined;
    sharedCodes.set(code, { prefixLength, disputed });
    mainCountryOnly.country_calling_codes[code] = [countries[0]!];
  }
}

function parse(raw: string, region: CountryCode) {
  const fast = parsePhoneNumber(raw, region, mainCountryOnly);
  if (!fast) return parsePhoneNumber(raw, region, metadata);
  const shared = sharedCodes.get(fast.countryCallingCode);
  if (shared === undefined) return fast; // one country for the code: nothing was detected
  const source = (fast as unknown as { __countryCallingCodeSource?: string }).__countryCallingCodeSource;
  const n = fast.nationalNumber.length;
  if (
    source === 'FROM_NUMBER_WITH_PLUS_SIGN' &&
    shared.prefixLength !== undefined &&
    !shared.disputed.has(n) &&
    !shared.disputed.has(n - shared.prefixLength)
  ) {
    return fast;
  }
  return parsePhoneNumber(raw, region, metadata);
}

/** A phone number in the two forms we store: E.164 (`+15551234567`) and its digits (`15551234567`). */
export interface NormalisedPhone {
  e164: string;
  digits: string;
}

/**
 * Parses a phone number as a person writes it (`+1 555 123 4567`, `(555) 123-4567`, `15551234567`),
 * reading numbers without a country code in `region`.
 *
 * "Valid" here is libphonenumber's *possible* check (right length for the country): its stricter
 * isValid() rejects the fictional 555 numbers that the issue requires to work.
 * @returns the normalised number, or null when the input is not a possible phone number.
 */
export function normalisePhone(raw: string, region: CountryCode): NormalisedPhone | null {
  if (raw.length > 64) return null;
  const parsed = parse(raw, region);
  if (!parsed || !parsed.isPossible()) return null;
  // The number we store must read back as itself (API.md §1.7), or a contact could never be found
  // by its own number. Two ways libphonenumber's first reading is not that (found by the phone
  // fuzz target): a local number of a country that shares its calling code (`5550100` in Canada)
  // is possible, but its E.164 form (`+15550100`) belongs to the code's main country, where it is
  // not: refused; and a national prefix written twice (`+44 0-0131…`) loses only one 0, the next
  // reading the other: the number is the second reading, when that one reads back as itself.
  // Input already in E.164 (what the API stores and most clients send) is its own reading.
  let number = parsed.number;
  if (raw !== number) {
    const again = parse(number, region);
    if (!again || !again.isPossible()) return null;
    if (again.number !== number) {
      const third = parse(again.number, region);
      if (!third || third.number !== again.number || !third.isPossible()) return null;
      number = again.number;
    }
  }
  return { e164: number, digits: number.slice(1) };
}

/** Every country calling code (`1`, `44`, `358`…): a prefix-free set, 1 to 3 digits long. */
const CALLING_CODES = new Set(Object.keys(metadata.country_calling_codes));

/**
 * The country calling code an E.164 number (its digits, without `+`) starts with, or undefined
 * (a short code, or digits no code starts). Calling codes are prefix-free, so at most one of the
 * first one, two or three digits is one (docs/API.md §17, "local").
 */
export function callingCodeOf(digits: string): string | undefined {
  if (digits.length < 7) return undefined; // no E.164 number is this short (Niue's are 7 digits): a short code
  for (let n = 1; n <= 3; n++) {
    const code = digits.slice(0, n);
    if (CALLING_CODES.has(code)) return code;
  }
  return undefined;
}
