import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';

/** What traceCrypto records: `sha256(LABEL)` for each hash of the value under test, `timingSafeEqual(a,b)` with byte lengths. */
export interface CryptoTrace {
  run<T>(value: string, fn: () => Promise<T>): Promise<{ result: T; calls: string[] }>;
}

/**
 * Records, while `run`'s function runs, each hash of the value under test (by createHash().update
 * or the one-shot crypto.hash, as `ALGORITHM(label)`) and each crypto.timingSafeEqual with its two
 * lengths, in order: the path a secret takes through a request. node:module's
 * syncBuiltinESMExports makes the wrappers visible to src/ (named imports) and to packages that
 * import the namespace; the originals come back after the test.
 */
export function traceCrypto(t: { after(fn: () => unknown): void }, label = 'value'): CryptoTrace {
  let current = '';
  const calls: string[] = [];
  const original = { timingSafeEqual: crypto.timingSafeEqual, createHash: crypto.createHash, hash: crypto.hash };
  const noteHash = (algorithm: string, data: unknown) => {
    if (typeof data === 'string' && data === current) calls.push(`${algorithm.toLowerCase()}(${label})`);
  };
  crypto.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    calls.push(`timingSafeEqual(${a.byteLength},${b.byteLength})`);
    return original.timingSafeEqual(a, b);
  };
  crypto.createHash = (algorithm: string, options?: crypto.HashOptions) => {
    const h = original.createHash(algorithm, options);
    const update = h.update.bind(h) as (data: unknown, encoding?: unknown) => crypto.Hash;
    h.update = (data: unknown, encoding?: unknown) => {
      noteHash(algorithm, data);
      return update(data, encoding);
    };
    return h;
  };
  crypto.hash = ((algorithm: string, data: crypto.BinaryLike, outputEncoding?: crypto.BinaryToTextEncoding) => {
    noteHash(algorithm, data);
    return original.hash(algorithm, data, outputEncoding);
  }) as typeof crypto.hash;
  syncBuiltinESMExports();
  t.after(() => {
    Object.assign(crypto, original);
    syncBuiltinESMExports();
  });
  return {
    async run(value, fn) {
      calls.length = 0;
      current = value;
      try {
        return { result: await fn(), calls: [...calls] };
      } finally {
        current = '';
      }
    },
  };
}
