/**
 * What a fuzz target is (docs/RELIABILITY.md "Fuzzing"). A target calls one of our parsers through
 * the entry point the server itself uses, with inputs generated from the parser's grammar (a
 * fast-check arbitrary: valid forms, broken forms and the edges between) and mutated from a corpus
 * by fuzz/engine.ts, which keeps every input that reaches a block of our code not reached before.
 *
 * The oracle is `run`: it returns when the input was handled as the rules say and throws
 * `OracleError` (or anything else) when it was not. Every target at least checks that nothing but
 * our typed errors escapes; the engine adds the bounds on time (`maxMs` per input) and memory (the
 * worker's heap limit). Targets with a stronger oracle (a round trip, an invariant) say so in
 * `oracle`.
 */
import type fc from 'fast-check';

/** A value a corpus file can hold: JSON, plus byte strings (stored as `{ "$bytes": base64 }`). */
export type FuzzValue = string | number | boolean | null | Uint8Array | readonly FuzzValue[] | { readonly [key: string]: FuzzValue };

export interface FuzzTarget<T extends FuzzValue = FuzzValue> {
  /** The name `npm run fuzz -- NAME` takes, and the folder of its corpus (fuzz/corpus/NAME). */
  readonly name: string;
  /** What `run` checks, in a sentence or two (printed by `npm run fuzz -- --list`). */
  readonly oracle: string;
  /** The source files whose branch coverage the run reports (repository-relative). */
  readonly files: readonly string[];
  /** The input's grammar: valid and broken forms. */
  readonly arbitrary: fc.Arbitrary<T>;
  /** Strings the mutator splices in (keywords, delimiters of the grammar). */
  readonly dictionary?: readonly string[];
  /** The bound on one input's time, in ms (default 1000). Longer is a defect, like a throw. */
  readonly maxMs?: number;
  /** Builds what `run` needs (an app, a database); called once per process. */
  setup?(): Promise<void>;
  /** Runs one input through the parser and checks the oracle; throws on a violation. */
  run(input: T): void | Promise<void>;
  /** Frees what `setup` built. */
  teardown?(): Promise<void>;
}

/** An oracle's verdict that the parser broke a rule (as opposed to a crash inside it). */
export class OracleError extends Error {
  override name = 'OracleError';
}

/** Throws OracleError with `message` unless `condition` holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new OracleError(message);
}

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Calls `fn`; an error of one of `allowed` classes is the parser's documented refusal and is
 * returned, anything else propagates (the oracle's "no throw except our typed errors").
 */
export async function refusesOnlyWith<R>(allowed: readonly ErrorClass[], fn: () => R | Promise<R>): Promise<R | Error> {
  try {
    return await fn();
  } catch (err) {
    if (allowed.some((cls) => err instanceof cls)) return err as Error;
    throw err;
  }
}

/** The synchronous form of refusesOnlyWith (for parsers that never await). */
export function refusesOnlyWithSync<R>(allowed: readonly ErrorClass[], fn: () => R): R | Error {
  try {
    return fn();
  } catch (err) {
    if (allowed.some((cls) => err instanceof cls)) return err as Error;
    throw err;
  }
}

/** Encodes a corpus value as JSON text (byte strings as `{ "$bytes": base64 }`). */
export function encodeInput(value: FuzzValue): string {
  return JSON.stringify(toJson(value));
}

function toJson(value: FuzzValue): unknown {
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return (value as readonly FuzzValue[]).map(toJson);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, FuzzValue>)) out[k] = toJson(v);
    return out;
  }
  return value;
}

/** Decodes what encodeInput wrote. */
export function decodeInput(text: string): FuzzValue {
  return fromJson(JSON.parse(text));
}

function fromJson(value: unknown): FuzzValue {
  if (Array.isArray(value)) return value.map(fromJson);
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 1 && keys[0] === '$bytes' && typeof record.$bytes === 'string') {
      return new Uint8Array(Buffer.from(record.$bytes, 'base64'));
    }
    const out: Record<string, FuzzValue> = {};
    for (const k of keys) out[k] = fromJson(record[k]);
    return out;
  }
  return value as FuzzValue;
}
