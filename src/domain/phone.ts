import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

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
  const parsed = parsePhoneNumberFromString(raw, region);
  if (!parsed || !parsed.isPossible()) return null;
  return { e164: parsed.number, digits: parsed.number.slice(1) };
}
