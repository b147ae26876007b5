/**
 * The sender pool's choice (docs/API.md §17.1; src/domain/sender-pool.ts `chooseSender`, `take`) as
 * properties against a brute-force ORACLE written here from the document alone:
 * - for random pools (1 to 8 numbers: NANP numbers in a few area codes, numbers of other countries,
 *   short codes; random MaxPerDay and MaxRecipientsPerMonth, often small or reached; random counts
 *   and known recipients), a random recipient and a random sticky number (none, one of the pool, one
 *   outside it), `chooseSender` returns exactly the oracle's number (or undefined when the oracle
 *   finds none), and reads the pool without changing it;
 * - sequentially, `chooseSender` + `take` over a list of recipients (the sticky number of a recipient
 *   being the number its previous message went from) agrees with the oracle at every step, `take`
 *   counts exactly what the document says (a message today; a recipient new this month only while
 *   the number has a MaxRecipientsPerMonth), and no number ever goes past MaxPerDay or
 *   MaxRecipientsPerMonth;
 * - explicit examples of the rules that are easy to get wrong.
 *
 * The oracle does not call the module's helpers (fits, roomToday, isLocal, callingCodeOf): every
 * generated number carries its calling code and (NANP) area code from the table it was made from
 * (checked once against libphonenumber-js `getCountryCallingCode`), and it enumerates each step's
 * candidates and sorts them by (room today desc, index asc).
 *
 * Rules found subtle (each has an example below):
 * - "local" in the NANP needs the area code too: +1 212 is not local to a +1 415 recipient, and the
 *   Bermudan +1 441 is NANP, not the UK's +44.
 * - a short code (5 or 6 digits) has no calling code, so it is never local, even when its digits
 *   start like a local number ("12125…" for a +1 212 recipient, "44770…" for a UK one).
 * - the sticky number wins whatever its room and whether or not it is local, but only when it fits;
 *   a full sticky number (or one no longer in the pool) falls through to local, then any.
 * - the "any" step considers every number again (local ones included) and prefers room, not
 *   locality: a full local step does not make the remaining local numbers preferred.
 * - "full" is per recipient for MaxRecipientsPerMonth: a recipient the number already has this
 *   month fits a number whose month is full; a new one does not.
 * - room is MaxPerDay − today (a count above a lowered limit is no room at all) and a number
 *   without MaxPerDay has unbounded room, so it beats any limited one; unbounded ties unbounded,
 *   and ties go to the first in numbers/index order.
 * - `take` adds the recipient to the month only while the number has a MaxRecipientsPerMonth (limits
 *   are counted only while they are set, §17.3), but always counts the message today.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { getCountryCallingCode, type CountryCode } from 'libphonenumber-js';
import { chooseSender, take, type PoolNumber } from '../../src/domain/sender-pool.ts';

const RUNS = 1000;

// ---------------------------------------------------------------------------------------------
// Numbers, with their calling code and area code known from how they are made.

/** A generated number: its digits, its calling code (undefined: a short code), its NANP area code. */
interface Phone {
  readonly number: string;
  readonly code: string | undefined;
  readonly area: string | undefined;
}

/** Countries outside the NANP: calling code, the digits a mobile number starts with, how many follow. */
const COUNTRIES: readonly { region: CountryCode; code: string; lead: string; rest: number }[] = [
  { region: 'GB', code: '44', lead: '77', rest: 8 },
  { region: 'FR', code: '33', lead: '6', rest: 8 },
  { region: 'FI', code: '358', lead: '4', rest: 8 },
  { region: 'AU', code: '61', lead: '4', rest: 8 },
  { region: 'IE', code: '353', lead: '8', rest: 8 },
  { region: 'RU', code: '7', lead: '91', rest: 8 },
];
/** NANP area codes of pool numbers (441: Bermuda, calling code 1, not the UK's 44). */
const POOL_AREAS = ['212', '415', '441', '646'] as const;
/** Recipients also come from an area code no pool number has. */
const RECIPIENT_AREAS = [...POOL_AREAS, '312'] as const;
/** How short codes start: like a NANP number, like a UK, Finnish, French or Australian one, or not. */
const SHORT_LEADS = ['1', '12', '121', '44', '447', '358', '33', '61', '2', '9'] as const;

const digits = (n: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));

const nanp = (areas: readonly string[]): fc.Arbitrary<Phone> =>
  fc.tuple(fc.constantFrom(...areas), digits(7)).map(([area, rest]) => ({ number: `1${area}${rest}`, code: '1', area }));

const international: fc.Arbitrary<Phone> = fc
  .constantFrom(...COUNTRIES)
  .chain((c) => digits(c.rest).map((rest) => ({ number: `${c.code}${c.lead}${rest}`, code: c.code, area: undefined })));

const shortCode: fc.Arbitrary<Phone> = fc
  .tuple(fc.constantFrom(...SHORT_LEADS), fc.constantFrom(5, 6), digits(6))
  .map(([lead, length, rest]) => ({ number: (lead + rest).slice(0, length), code: undefined, area: undefined }));

/** A number of an account: NANP, another country's, or a short code. */
const poolPhone: fc.Arbitrary<Phone> = fc.oneof(
  { weight: 4, arbitrary: nanp(POOL_AREAS) },
  { weight: 3, arbitrary: international },
  { weight: 2, arbitrary: shortCode },
);

/** A recipient: mostly NANP or another country's (sharing codes with the pool), rarely a short code. */
const recipientPhone: fc.Arbitrary<Phone> = fc.oneof(
  { weight: 5, arbitrary: nanp(RECIPIENT_AREAS) },
  { weight: 4, arbitrary: international },
  { weight: 1, arbitrary: shortCode },
);

// ---------------------------------------------------------------------------------------------
// Pools.

/** How many recipients a scenario's universe holds at most (the known sets are subsets of it). */
const UNIVERSE = 6;

/** One pool number as generated: limits 0 (none) to small, counts around them. */
interface GenNumber {
  readonly phone: Phone;
  readonly maxPerDay: number;
  readonly maxRecipientsPerMonth: number;
  readonly today: number;
  /** Recipients counted this month beyond the known ones among the universe. */
  readonly others: number;
  /** Which of the universe's recipients it already has this month. */
  readonly knownMask: readonly boolean[];
}

const genNumber: fc.Arbitrary<GenNumber> = fc.record({
  phone: poolPhone,
  maxPerDay: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4 })),
  maxRecipientsPerMonth: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 })),
  today: fc.integer({ min: 0, max: 5 }),
  others: fc.integer({ min: 0, max: 2 }),
  knownMask: fc.array(fc.boolean(), { minLength: UNIVERSE, maxLength: UNIVERSE }),
});

type GenSticky = { kind: 'none' } | { kind: 'pool'; index: number } | { kind: 'other'; phone: Phone };

const genSticky: fc.Arbitrary<GenSticky> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('pool' as const), index: fc.nat({ max: 7 }) }),
  fc.record({ kind: fc.constant('other' as const), phone: poolPhone }),
);

interface Scenario {
  /** The recipients of the scenario (the known sets are drawn from them). */
  readonly universe: readonly Phone[];
  readonly numbers: readonly GenNumber[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  universe: fc.uniqueArray(recipientPhone, { minLength: 1, maxLength: UNIVERSE, selector: (p) => p.number }),
  numbers: fc.uniqueArray(genNumber, { minLength: 1, maxLength: 8, selector: (n) => n.phone.number }),
});

/** The oracle's view of a number: plain data, its own copy of the counts. */
interface Model {
  readonly phone: Phone;
  readonly maxPerDay: number;
  readonly maxRecipientsPerMonth: number;
  today: number;
  recipients: number;
  readonly known: Set<string>;
}

function models(s: Scenario): Model[] {
  return s.numbers.map((n) => {
    const known = new Set(s.universe.filter((_, i) => n.knownMask[i]).map((p) => p.number));
    return {
      phone: n.phone,
      maxPerDay: n.maxPerDay,
      maxRecipientsPerMonth: n.maxRecipientsPerMonth,
      today: n.today,
      // A month's count holds at least the recipients it knows (as loadPool reads them).
      recipients: known.size + n.others,
      known,
    };
  });
}

/** The module's input built from the models (fresh objects: `take` changes them). */
function poolOf(ms: readonly Model[]): PoolNumber[] {
  return ms.map((m) => ({
    number: m.phone.number,
    maxPerDay: m.maxPerDay,
    maxRecipientsPerMonth: m.maxRecipientsPerMonth,
    today: m.today,
    recipients: m.recipients,
    known: new Set(m.known),
  }));
}

function stickyOf(g: GenSticky, ms: readonly Model[]): string | undefined {
  if (g.kind === 'none') return undefined;
  if (g.kind === 'pool') return ms[g.index % ms.length]!.phone.number;
  return g.phone.number;
}

// ---------------------------------------------------------------------------------------------
// The oracle: docs/API.md §17.1 step by step.

type Step = 'sticky' | 'local' | 'any' | 'none';

/**
 * Full for this recipient (§17.1): it has queued MaxPerDay messages today, or, for a recipient it has
 * not sent to this month, it already has MaxRecipientsPerMonth distinct recipients this month.
 */
function isFull(m: Model, recipient: Phone): boolean {
  const dayFull = m.maxPerDay !== 0 && m.today >= m.maxPerDay;
  const monthFull = m.maxRecipientsPerMonth !== 0 && !m.known.has(recipient.number) && m.recipients >= m.maxRecipientsPerMonth;
  return dayFull || monthFull;
}

/** Room left today; a number without MaxPerDay has unlimited room. */
function room(m: Model): number {
  return m.maxPerDay === 0 ? Number.POSITIVE_INFINITY : m.maxPerDay - m.today;
}

/** Same calling code; in the NANP the same area code too. A number without calling code is local to nothing. */
function local(m: Model, recipient: Phone): boolean {
  if (recipient.code === undefined || m.phone.code !== recipient.code) return false;
  return recipient.code !== '1' || m.phone.area === recipient.area;
}

/** Among candidate indices, the one with the most room, the first on a tie. */
function pick(ms: readonly Model[], candidates: number[]): number | undefined {
  const sorted = [...candidates].sort((a, b) => {
    const ra = room(ms[a]!);
    const rb = room(ms[b]!);
    if (ra !== rb) return ra > rb ? -1 : 1;
    return a - b;
  });
  return sorted[0];
}

/** The index of the number §17.1 chooses, and the step that chose it. */
function oracle(ms: readonly Model[], recipient: Phone, sticky: string | undefined): { index: number | undefined; step: Step } {
  if (sticky !== undefined) {
    const i = ms.findIndex((m) => m.phone.number === sticky);
    if (i !== -1 && !isFull(ms[i]!, recipient)) return { index: i, step: 'sticky' };
  }
  const all = ms.map((_, i) => i).filter((i) => !isFull(ms[i]!, recipient));
  const locals = all.filter((i) => local(ms[i]!, recipient));
  if (locals.length > 0) return { index: pick(ms, locals), step: 'local' };
  if (all.length > 0) return { index: pick(ms, all), step: 'any' };
  return { index: undefined, step: 'none' };
}

/** A message from `m` to `recipient`, as §17 counts it: today always; the month only while it has a limit. */
function count(m: Model, recipient: Phone): void {
  m.today += 1;
  if (m.maxRecipientsPerMonth !== 0 && !m.known.has(recipient.number)) {
    m.known.add(recipient.number);
    m.recipients += 1;
  }
}

/** The module's PoolNumber state as plain data, to compare with the model's. */
const stateOf = (n: PoolNumber) => ({ today: n.today, recipients: n.recipients, known: [...n.known].sort() });
const modelState = (m: Model) => ({ today: m.today, recipients: m.recipients, known: [...m.known].sort() });

function describeCase(ms: readonly Model[], recipient: Phone, sticky: string | undefined): string {
  return JSON.stringify({
    recipient: recipient.number,
    sticky,
    numbers: ms.map((m) => ({ ...m, known: [...m.known] })),
  });
}

// ---------------------------------------------------------------------------------------------

test('the generated calling codes are libphonenumber-js’s', () => {
  for (const c of COUNTRIES) assert.equal(getCountryCallingCode(c.region), c.code, c.region);
  assert.equal(getCountryCallingCode('US'), '1');
  assert.equal(getCountryCallingCode('BM'), '1', 'Bermuda (area code 441) is in the NANP');
});

test('property: chooseSender returns exactly the number the §17.1 oracle enumerates (and changes nothing)', () => {
  const steps: Record<Step, number> = { sticky: 0, local: 0, any: 0, none: 0 };
  // Cases of the subtle rules: a tie on room; a local number chosen though another has more room; a
  // sticky number of the pool passed over because it is full.
  const seen = { ties: 0, localOverRoom: 0, stickyFull: 0 };
  fc.assert(
    fc.property(scenario, fc.nat(), genSticky, (s, r, g) => {
      const ms = models(s);
      const recipient = s.universe[r % s.universe.length]!;
      const sticky = stickyOf(g, ms);
      const expected = oracle(ms, recipient, sticky);
      steps[expected.step] += 1;
      if (expected.index !== undefined && expected.step !== 'sticky') {
        const best = room(ms[expected.index]!);
        if (ms.some((m, i) => i !== expected.index && !isFull(m, recipient) && room(m) === best)) seen.ties += 1;
        if (expected.step === 'local' && ms.some((m) => !isFull(m, recipient) && room(m) > best)) seen.localOverRoom += 1;
      }
      const stuck = ms.find((m) => m.phone.number === sticky);
      if (stuck !== undefined && isFull(stuck, recipient)) seen.stickyFull += 1;
      const pool = poolOf(ms);
      const before = pool.map(stateOf);
      const chosen = chooseSender(recipient.number, pool, sticky);
      const what = describeCase(ms, recipient, sticky);
      if (expected.index === undefined) assert.equal(chosen, undefined, `every number is full: ${what}`);
      else assert.equal(chosen, pool[expected.index], `expected ${pool[expected.index]!.number} (${expected.step}): ${what}`);
      assert.deepEqual(pool.map(stateOf), before, 'chooseSender only reads the pool');
    }),
    { numRuns: RUNS },
  );
  // The generator reaches every step of the rule, and ties, often enough for the property to mean something.
  for (const step of Object.keys(steps) as Step[]) assert.ok(steps[step] >= RUNS / 50, `step ${step} reached ${steps[step]} times`);
  for (const [what, times] of Object.entries(seen)) assert.ok(times >= RUNS / 100, `${what} reached ${times} times`);
});

test('property: chooseSender + take over a list of recipients agree with the oracle, count as §17 says, and never pass a limit', () => {
  let refused = 0;
  let sent = 0;
  fc.assert(
    fc.property(
      scenario,
      fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
      fc.array(genSticky, { minLength: UNIVERSE, maxLength: UNIVERSE }),
      (s, order, initialSticky) => {
        const ms = models(s);
        const pool = poolOf(ms);
        const initial = ms.map((m) => ({ today: m.today, recipients: m.recipients, known: new Set(m.known) }));
        // The sticky number of each recipient: the thread's newest message's number, which every
        // message queued here becomes.
        const sticky = new Map<string, string>();
        s.universe.forEach((p, i) => {
          const n = stickyOf(initialSticky[i]!, ms);
          if (n !== undefined) sticky.set(p.number, n);
        });
        const sentFrom = ms.map(() => 0);
        const newRecipients = ms.map(() => new Set<string>());
        for (const r of order) {
          const recipient = s.universe[r % s.universe.length]!;
          const expected = oracle(ms, recipient, sticky.get(recipient.number));
          const chosen = chooseSender(recipient.number, pool, sticky.get(recipient.number));
          const what = describeCase(ms, recipient, sticky.get(recipient.number));
          if (expected.index === undefined) {
            assert.equal(chosen, undefined, `undefined only when the oracle finds no number either: ${what}`);
            assert.ok(
              ms.every((m) => isFull(m, recipient)),
              'refused: every number is full',
            );
            refused += 1;
            continue;
          }
          assert.ok(
            chosen !== undefined && chosen === pool[expected.index],
            `expected ${pool[expected.index]!.number} (${expected.step}), got ${chosen?.number}: ${what}`,
          );
          take(chosen, recipient.number);
          count(ms[expected.index]!, recipient);
          sent += 1;
          sentFrom[expected.index]! += 1;
          if (!initial[expected.index]!.known.has(recipient.number)) newRecipients[expected.index]!.add(recipient.number);
          sticky.set(recipient.number, chosen.number);
          assert.deepEqual(pool.map(stateOf), ms.map(modelState), 'take counts the message today, and a new recipient of a limited month');
        }
        // No number went past its limits: what it queued here fits in the room it had.
        ms.forEach((m, i) => {
          if (m.maxPerDay > 0) assert.ok(sentFrom[i]! <= Math.max(0, m.maxPerDay - initial[i]!.today), `MaxPerDay of ${m.phone.number}`);
          if (m.maxRecipientsPerMonth > 0) {
            assert.ok(
              newRecipients[i]!.size <= Math.max(0, m.maxRecipientsPerMonth - initial[i]!.recipients),
              `MaxRecipientsPerMonth of ${m.phone.number}`,
            );
          }
        });
      },
    ),
    { numRuns: RUNS },
  );
  assert.ok(refused >= RUNS / 10 && sent >= RUNS, `refused ${refused}, sent ${sent}`);
});

// ---------------------------------------------------------------------------------------------
// Examples of the subtle rules.

const NY = '12125550100'; // NANP 212
const SF = '14155550100'; // NANP 415
const BERMUDA = '14415550100'; // NANP 441
const UK = '447700900100';
const UK2 = '447700900200';
const FI = '358401234567';

/** A pool number: no limits and nothing counted unless given. */
function n(number: string, o: Partial<Omit<PoolNumber, 'number' | 'known'>> & { known?: string[] } = {}): PoolNumber {
  return {
    number,
    maxPerDay: o.maxPerDay ?? 0,
    maxRecipientsPerMonth: o.maxRecipientsPerMonth ?? 0,
    today: o.today ?? 0,
    recipients: o.recipients ?? 0,
    known: new Set(o.known ?? []),
  };
}

const chosen = (recipient: string, pool: PoolNumber[], sticky?: string) => chooseSender(recipient, pool, sticky)?.number;

test('NANP: a number in another area code is not local; the same area code is', () => {
  // SF has the recipient's calling code but not its area code: not local, so the "any" step decides,
  // where the unlimited UK number has the most room.
  assert.equal(chosen('12125550199', [n(SF, { maxPerDay: 10 }), n(UK)]), UK);
  assert.equal(chosen('12125550199', [n(SF, { maxPerDay: 10 }), n(UK), n(NY, { maxPerDay: 1 })]), NY, 'local beats room');
  // Bermuda's +1 441 is NANP: not local to a UK recipient, and the UK number not local to it.
  assert.equal(chosen('447700900555', [n(BERMUDA), n(UK, { maxPerDay: 1 })]), UK);
  assert.equal(chosen('14415550199', [n(UK), n(BERMUDA, { maxPerDay: 1 })]), BERMUDA);
  assert.equal(chosen('14155550199', [n(UK), n(BERMUDA, { maxPerDay: 5 })]), UK, 'no 415 number: any, unlimited room wins');
  // Outside the NANP the calling code alone is local.
  assert.equal(chosen('447700900555', [n(FI), n(UK2, { maxPerDay: 1 })]), UK2);
});

test('a short code is never local, even when its digits start like the recipient', () => {
  // "12125" would read as +1 212 and "44770" as +44 if a short code had a calling code.
  assert.equal(chosen('12125550199', [n('12125', { maxPerDay: 5 }), n(UK)]), UK);
  assert.equal(chosen('447700900555', [n('447709', { maxPerDay: 5 }), n(FI)]), FI);
  assert.equal(chosen('358401234999', [n('35840', { maxPerDay: 5 }), n(NY)]), NY);
  // It is still an "any" number, chosen on room.
  assert.equal(chosen('12125550199', [n(UK, { maxPerDay: 1 }), n('12125')]), '12125');
  // A short-code recipient has no calling code: nothing is local to it, not even the same short code.
  assert.equal(chosen('12345', [n('12345', { maxPerDay: 1 }), n(SF)]), SF);
});

test('sticky: wins when it fits (whatever its room or locality); full, it falls through to local, then any', () => {
  const recipient = '14155550199';
  // Sticky UK, with 1 left, beats the local, unlimited SF.
  assert.equal(chosen(recipient, [n(SF), n(UK, { maxPerDay: 2, today: 1 })], UK), UK);
  // Sticky full today: local SF (not the unlimited NY, which has more room but is not local).
  assert.equal(chosen(recipient, [n(UK, { maxPerDay: 2, today: 2 }), n(NY), n(SF, { maxPerDay: 3, today: 2 })], UK), SF);
  // Sticky full for a new recipient this month: the same.
  assert.equal(chosen(recipient, [n(UK, { maxRecipientsPerMonth: 1, recipients: 1, known: ['447700900555'] }), n(NY), n(SF)], UK), SF);
  // Sticky full and no local number fits: any (most room).
  assert.equal(chosen(recipient, [n(UK, { maxPerDay: 1, today: 1 }), n(SF, { maxPerDay: 1, today: 1 }), n(NY, { maxPerDay: 2 })], UK), NY);
  // A sticky number no longer in the pool (not Active): local.
  assert.equal(chosen(recipient, [n(NY), n(SF, { maxPerDay: 1 })], '14155550000'), SF);
  // Full everywhere: none.
  assert.equal(chosen(recipient, [n(UK, { maxPerDay: 1, today: 1 }), n(SF, { maxPerDay: 1, today: 1 })], UK), undefined);
});

test('MaxRecipientsPerMonth: a known recipient fits a number whose month is full; a new one does not', () => {
  const full = () => n(SF, { maxRecipientsPerMonth: 2, recipients: 2, known: ['14155550001', '14155550002'] });
  assert.equal(chosen('14155550001', [full()]), SF, 'known this month');
  assert.equal(chosen('14155550003', [full()]), undefined, 'new: the month is full');
  assert.equal(chosen('14155550003', [full(), n(NY, { maxPerDay: 1 })]), NY, 'new: the other number');
  // Known but full today: full all the same.
  assert.equal(
    chosen('14155550001', [n(SF, { maxPerDay: 1, today: 1, maxRecipientsPerMonth: 2, recipients: 1, known: ['14155550001'] })]),
    undefined,
  );
  // take: a known recipient is not counted again; a new one is, and fills the month.
  const pool = [n(SF, { maxRecipientsPerMonth: 2, recipients: 1, known: ['14155550001'] })];
  take(pool[0]!, '14155550001');
  assert.deepEqual(stateOf(pool[0]!), { today: 1, recipients: 1, known: ['14155550001'] });
  take(pool[0]!, '14155550002');
  assert.deepEqual(stateOf(pool[0]!), { today: 2, recipients: 2, known: ['14155550001', '14155550002'] });
  assert.equal(chosen('14155550003', pool), undefined);
  // Without a MaxRecipientsPerMonth, take counts no recipient (only the message).
  const unlimited = n(SF);
  take(unlimited, '14155550001');
  assert.deepEqual(stateOf(unlimited), { today: 1, recipients: 0, known: [] });
});

test('room: the most left today wins, unlimited beats any limit, a count above a lowered limit is full; ties go to the first', () => {
  const r = '12125550199';
  assert.equal(chosen(r, [n(NY, { maxPerDay: 5, today: 4 }), n('12125550101', { maxPerDay: 3 })]), '12125550101', '3 left beats 1');
  assert.equal(chosen(r, [n(NY, { maxPerDay: 1000 }), n('12125550101')]), '12125550101', 'unlimited beats 1000');
  assert.equal(chosen(r, [n(NY), n('12125550101')]), NY, 'unlimited ties unlimited: the first');
  assert.equal(chosen(r, [n('12125550101'), n(NY)]), '12125550101', 'the first in the given order, not by digits');
  assert.equal(chosen(r, [n(NY, { maxPerDay: 4, today: 2 }), n('12125550101', { maxPerDay: 3, today: 1 })]), NY, '2 and 2: the first');
  assert.equal(chosen(r, [n(NY, { maxPerDay: 2, today: 5 }), n(UK, { maxPerDay: 1 })]), UK, 'today 5 of a limit lowered to 2: full');
  // Room is MaxPerDay − today, not MaxPerDay: a big limit mostly used loses to a small one unused.
  assert.equal(chosen(r, [n(UK, { maxPerDay: 100, today: 99 }), n(FI, { maxPerDay: 2 })]), FI);
  // A day count left over from before the limit was set means nothing while there is no limit.
  assert.equal(chosen(r, [n(UK, { maxPerDay: 5 }), n(FI, { today: 50 })]), FI);
});
