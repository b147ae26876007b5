import { createHash } from 'node:crypto';
import type { CountryCode } from 'libphonenumber-js';
import type { Clock } from '../lib/time.ts';
import { inTransaction, type Store } from '../store/db.ts';
import { refundCredits } from '../store/repositories/credits.ts';
import { eraseNumber, type ErasureResult } from '../store/repositories/erasure.ts';
import { lockCredits } from '../store/repositories/scheduled.ts';
import { ERASED } from '../store/personal-data.ts';
import { ValidationFailedError } from './errors.ts';
import { callingCodeOf, normalisePhone } from './phone.ts';
import { isBlank, messages } from './validation.ts';
import { emitMessageEvents } from './webhooks.ts';

/**
 * `contacts/erase?number=` (docs/API.md §10.2.1): erases a person's data from the account, when
 * the person asks. Every place that can hold a phone number, a message text or a contact's data
 * is listed in src/store/personal-data.ts with what erasure does to it; the writes are
 * src/store/repositories/erasure.ts, one step per table. Here: the number is read, the work runs
 * in one transaction (all of it or none), and what it frees is given back.
 *
 * Choices the rules leave open, written down here (and in docs/API.md §10.2.1):
 * - The number is read like `contacts/find?number=`: any common writing, national numbers in the
 *   service's region; missing: 400; blank: 422 `Number cannot be blank.`; not a possible number
 *   (or sent as a list): 422 `Number is invalid.`. A valid number never seen, or erased already:
 *   204, nothing changes (but the audit entry).
 * - Queued messages to the person that no dispatcher is handing to a carrier end Rejected with
 *   ErrorCode `ERASED` and are refunded (a batch's together, as a closed account's are); their
 *   `message.rejected` events carry the erased record. Scheduled messages to the person are
 *   cancelled and their reservations refunded: nothing more goes to someone who asked to be
 *   forgotten.
 * - The consent ledger's hash is SHA-256 over the number's E.164 digits without `+` (as
 *   Contact.Number shows it), in lowercase hex.
 * - The audit entry's ObjectId is the erased contact's Id (`""` when the account had none): it
 *   ties the erasure to the earlier entries of that contact without holding the number.
 */

export interface EraseDeps {
  store: Store;
  clock: Clock;
  /** The service's default region (MSGSVC_DEFAULT_REGION): national numbers are read in it. */
  region: CountryCode;
}

/** The SHA-256 the consent ledger keeps in place of a number (`digits`: E.164 without `+`). */
export function numberSha256(digits: string): string {
  return createHash('sha256').update(digits).digest('hex');
}

/** A run of digits with the separators people write numbers with (`+1 (555) 010-0199`, `0555.010.01.99`). */
const PHONE_RUN = /[+(]*\d(?:[\d\s().\-/]*\d)?/g;
/** The separators inside a run: a run of several numbers is read part by part between them. */
const SEPARATORS = /([\s().\-/]+)/;
/** The most parts one writing of a number has (`(+33) 6 12 34 56 78`: 7, the first one empty). */
const MAX_PARTS = 8;

/**
 * `text` with every writing of the number `e164` replaced by `erased`: a run of digits and
 * separators that is the number, read as contacts/find reads one (in `region`), or its E.164
 * digits, or its national significant number, with or without a trunk `0`. A run that is not
 * the number whole (`send-13125550178-2026`, two numbers side by side) is read part by part.
 */
export function numberRedactor(e164: string, region: CountryCode): (text: string) => string {
  const digits = e164.slice(1);
  const code = callingCodeOf(digits);
  const national = code === undefined ? digits : digits.slice(code.length);
  const forms = new Set([digits, national, `0${national}`]);
  const isNumber = (writing: string): boolean => {
    const d = writing.replace(/\D/g, '');
    if (forms.has(d)) return true;
    if (d.length < national.length || d.length > digits.length + 3) return false;
    return normalisePhone(writing.trim(), region)?.e164 === e164;
  };
  const redactRun = (run: string): string => {
    if (isNumber(run)) return ERASED;
    const parts = run.split(SEPARATORS);
    const count = (parts.length + 1) / 2;
    if (count < 2) return run;
    const out: string[] = [];
    let i = 0;
    next: while (i < count) {
      for (let j = Math.min(count, i + MAX_PARTS); j > i; j--) {
        if (isNumber(parts.slice(2 * i, 2 * j - 1).join(''))) {
          out.push(ERASED);
          if (j < count) out.push(parts[2 * j - 1]!);
          i = j;
          continue next;
        }
      }
      out.push(parts[2 * i]!);
      if (i + 1 < count) out.push(parts[2 * i + 1]!);
      i++;
    }
    return out.join('');
  };
  return (text) => (/\d/.test(text) ? text.replace(PHONE_RUN, redactRun) : text);
}

/**
 * `contacts/erase?number=` (docs/API.md §10.2.1), in one transaction: the account's contact with
 * that number, its custom field values and memberships are deleted, its consent ledger kept with
 * the number's SHA-256; in the message log, conversations and link clicks the number becomes
 * `erased` and the text `""`; everything else of src/store/personal-data.ts as it says. Another
 * account's data is never read or written.
 * @param number the `number` query parameter as sent.
 * @returns what was erased.
 * @throws ValidationFailedError (422) `Number cannot be blank.` / `Number is invalid.`
 */
export async function eraseContact(deps: EraseDeps, accountId: number, number: unknown): Promise<ErasureResult> {
  if (isBlank(number)) throw new ValidationFailedError([{ field: 'number', message: 'Number cannot be blank.' }]);
  const phone = typeof number === 'string' ? normalisePhone(number, deps.region) : null;
  if (!phone) throw new ValidationFailedError([{ field: 'number', message: messages.invalid('number') }]);
  const now = deps.clock.nowSeconds();
  const target = {
    accountId,
    digits: phone.digits,
    e164: phone.e164,
    sha256: numberSha256(phone.digits),
    now,
    nowMs: deps.clock.nowMs(),
    redact: numberRedactor(phone.e164, deps.region),
  };
  return inTransaction(
    deps.store,
    async (tx) => {
      // The balance row first (the lock order of every write that refunds a reservation).
      await lockCredits(tx, accountId);
      const result = await eraseNumber(tx, target);
      const refunds = new Map<string, number>();
      for (const m of result.rejected) {
        const ref = m.batch_id !== null ? `batch:${m.batch_id}` : `message:${m.id}`;
        refunds.set(ref, (refunds.get(ref) ?? 0) + m.credits);
      }
      for (const [ref, credits] of refunds) await refundCredits(tx, accountId, credits, now, ref, 'Recipient erased');
      for (const s of result.cancelled) await refundCredits(tx, accountId, s.reserved, now, `scheduled:${s.id}`, 'Recipient erased');
      // Their events carry the records as they now are: erased.
      await emitMessageEvents(tx, result.rejected, now);
      // The audit entry's ObjectId (src/store/audit.ts reads `id`): the erased contact, if any.
      return { ...result, id: result.contactIds[0] ?? '' };
    },
    { immediate: true },
  );
}
