/**
 * Structure-aware mutation of corpus inputs (fuzz/engine.ts). An input is a JSON-like value
 * (fuzz/target.ts FuzzValue); the mutator changes its leaves, never the keys of its objects, so a
 * mutated input still has the shape the target's `run` reads. Strings and byte strings get
 * libFuzzer's kinds of change: erase, insert, duplicate or swap a slice, flip a bit, put in an
 * "interesting" value or a dictionary token, splice with another corpus input.
 */
import type { FuzzValue } from './target.ts';

/** A small seeded generator (mulberry32): the same seed makes the same mutations. */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0 || 1;
  }
  /** A float in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }
}

/** Characters that break parsers: delimiters, escapes, controls, surrogates, wide characters. */
const SPECIAL = [
  '\u0000',
  '\t',
  '\n',
  '\r',
  ' ',
  '"',
  "'",
  '\\',
  '%',
  '&',
  '=',
  '[',
  ']',
  '{',
  '}',
  '<',
  '>',
  ';',
  ',',
  ':',
  '+',
  '#',
  '/',
  '?',
  '@',
  '*',
  '-',
  '.',
  '0',
  '9',
  'a',
  'Z',
  '\u007f',
  '\u0080',
  '\u00a0',
  '\u00ff',
  '\u20ac',
  '\ud83d',
  '\ude00',
  '\ud83d\ude00',
  '\ufeff',
  '\uffff',
  '%00',
  '%ff',
  '%zz',
  '&#',
  ']]>',
  '\u2028',
];
const INTERESTING_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x1b, 0x0a, 0x0d, 0x22, 0x25];
const INTERESTING_INTS = [0, 1, -1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff];
/** The longest string or byte string the mutator grows an input to (characters or bytes). */
const MAX_LEN = 64 * 1024;

type Leaf = string | number | boolean | Uint8Array;
type Donor = () => FuzzValue;

export class Mutator {
  constructor(
    private readonly rng: Rng,
    private readonly dictionary: readonly string[],
  ) {}

  /** A changed copy of `value` (1 to 4 stacked changes); `donor` gives another corpus input to splice from. */
  mutate(value: FuzzValue, donor: Donor): FuzzValue {
    let out = value;
    const rounds = 1 + this.rng.below(4);
    for (let i = 0; i < rounds; i++) out = this.#mutateSome(out, donor);
    return out;
  }

  #mutateSome(value: FuzzValue, donor: Donor): FuzzValue {
    if (typeof value === 'string') return this.#string(value, donor);
    if (value instanceof Uint8Array) return this.#bytes(value, donor);
    if (typeof value === 'number') return this.#number(value);
    if (typeof value === 'boolean') return !value;
    if (value === null) return null;
    if (Array.isArray(value)) {
      const items = [...(value as readonly FuzzValue[])];
      const roll = this.rng.below(10);
      if (items.length === 0 || roll === 0) {
        items.splice(this.rng.below(items.length + 1), 0, items.length > 0 ? this.rng.pick(items) : '');
      } else if (roll === 1) {
        items.splice(this.rng.below(items.length), 1);
      } else {
        const at = this.rng.below(items.length);
        items[at] = this.#mutateSome(items[at]!, donor);
      }
      return items;
    }
    const record = value as Readonly<Record<string, FuzzValue>>;
    const keys = Object.keys(record);
    if (keys.length === 0) return record;
    const key = this.rng.pick(keys);
    return { ...record, [key]: this.#mutateSome(record[key]!, donor) };
  }

  #number(n: number): number {
    switch (this.rng.below(4)) {
      case 0:
        return n + 1;
      case 1:
        return n - 1;
      case 2:
        return Number.isInteger(n) ? n * 2 : n * 10;
      default:
        return this.rng.pick(INTERESTING_INTS) * (this.rng.chance(0.2) ? -1 : 1);
    }
  }

  #token(): string {
    if (this.dictionary.length > 0 && this.rng.chance(0.6)) return this.rng.pick(this.dictionary);
    return this.rng.pick(SPECIAL);
  }

  #donorString(donor: Donor): string {
    const leaves: Leaf[] = [];
    collectLeaves(donor(), leaves);
    const strings = leaves.filter((l): l is string => typeof l === 'string' && l.length > 0);
    return strings.length > 0 ? this.rng.pick(strings) : this.#token();
  }

  #string(s: string, donor: Donor): string {
    const at = this.rng.below(s.length + 1);
    const len = 1 + this.rng.below(Math.max(1, Math.min(16, s.length - at)));
    let out: string;
    switch (this.rng.below(9)) {
      case 0: // erase a slice
        out = s.slice(0, at) + s.slice(at + len);
        break;
      case 1: // insert a token
      case 2:
        out = s.slice(0, at) + this.#token() + s.slice(at);
        break;
      case 3: // duplicate a slice (repetition finds quadratic paths)
        out = s.slice(0, at + len) + s.slice(at, at + len).repeat(1 + this.rng.below(this.rng.chance(0.1) ? 500 : 4)) + s.slice(at + len);
        break;
      case 4: // replace a character
        out = s.slice(0, at) + this.#token() + s.slice(at + 1);
        break;
      case 5: // splice with another input's string
        out = s.slice(0, at) + this.#donorString(donor).slice(this.rng.below(8));
        break;
      case 6: // insert a random code unit
        out = s.slice(0, at) + String.fromCharCode(this.rng.below(this.rng.chance(0.7) ? 0x80 : 0x10000)) + s.slice(at);
        break;
      case 7: // truncate
        out = s.slice(0, at);
        break;
      default: // change a digit run into an interesting number
        out = s.replace(/\d+/, () => String(this.rng.pick(INTERESTING_INTS)));
    }
    return out.length > MAX_LEN ? out.slice(0, MAX_LEN) : out;
  }

  #bytes(b: Uint8Array, donor: Donor): Uint8Array {
    const bytes = Buffer.from(b);
    const at = this.rng.below(bytes.length + 1);
    const len = 1 + this.rng.below(Math.max(1, Math.min(16, bytes.length - at)));
    let out: Buffer;
    switch (this.rng.below(8)) {
      case 0: // flip a bit
        if (bytes.length === 0) return Buffer.from([this.rng.pick(INTERESTING_BYTES)]);
        out = Buffer.from(bytes);
        out[at % bytes.length]! ^= 1 << this.rng.below(8);
        break;
      case 1: // an interesting byte
        if (bytes.length === 0) return Buffer.from([this.rng.pick(INTERESTING_BYTES)]);
        out = Buffer.from(bytes);
        out[at % bytes.length] = this.rng.pick(INTERESTING_BYTES);
        break;
      case 2: {
        // an interesting 32-bit big-endian integer (lengths, ids and counts in binary protocols)
        out = Buffer.from(bytes);
        if (out.length < 4) return Buffer.concat([out, Buffer.alloc(4 - out.length)]);
        out.writeUInt32BE(this.rng.pick(INTERESTING_INTS) >>> 0, Math.min(at, out.length - 4));
        break;
      }
      case 3: // erase a slice
        out = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + len)]);
        break;
      case 4: // insert random bytes
        out = Buffer.concat([
          bytes.subarray(0, at),
          Buffer.from(Array.from({ length: len }, () => this.rng.below(256))),
          bytes.subarray(at),
        ]);
        break;
      case 5: // duplicate a slice
        out = Buffer.concat([bytes.subarray(0, at + len), bytes.subarray(at, at + len), bytes.subarray(at + len)]);
        break;
      case 6: {
        // splice with another input's bytes
        const leaves: Leaf[] = [];
        collectLeaves(donor(), leaves);
        const other = leaves.find((l): l is Uint8Array => l instanceof Uint8Array) ?? Buffer.from(this.#token());
        out = Buffer.concat([bytes.subarray(0, at), Buffer.from(other).subarray(this.rng.below(other.length + 1))]);
        break;
      }
      default: // insert a token's bytes
        out = Buffer.concat([bytes.subarray(0, at), Buffer.from(this.#token(), 'latin1'), bytes.subarray(at)]);
    }
    return new Uint8Array(out.length > MAX_LEN ? out.subarray(0, MAX_LEN) : out);
  }
}

function collectLeaves(value: FuzzValue, out: Leaf[]): void {
  if (value === null) return;
  if (typeof value !== 'object' || value instanceof Uint8Array) {
    out.push(value);
    return;
  }
  for (const v of Array.isArray(value) ? (value as readonly FuzzValue[]) : Object.values(value)) collectLeaves(v, out);
}
