/**
 * Builds the web console (console/, Vite + Preact) into dist/console, or into the directory given as
 * the first argument: `node --import tsx scripts/build-console.ts [outDir]`. `npm run build` runs
 * it after the server's build, and each text file of the build gets a Brotli and a gzip copy
 * beside it (precompress). Vite is a development dependency: on a host installed with
 * `npm install --omit=dev` it is absent, and this prints one line and exits 0 (/console then says
 * how to build it).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { InlineConfig } from 'vite';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CONSOLE_ROOT = resolve(ROOT, 'console');
export const DEFAULT_OUT_DIR = resolve(ROOT, 'dist', 'console');

/**
 * The console's Vite configuration: served under /console/, hashed asset names, JSX through Vite's
 * own transform (oxc) with Preact's runtime, `node:crypto` (the typed client's randomUUID) mapped
 * to a browser module, no inline module-preload polyfill (CSP: no inline script).
 * @param outDir where the build goes (emptied first).
 */
export function consoleViteConfig(outDir: string = DEFAULT_OUT_DIR): InlineConfig {
  return {
    root: CONSOLE_ROOT,
    base: '/console/',
    configFile: false,
    logLevel: 'warn',
    publicDir: false,
    resolve: { alias: { 'node:crypto': resolve(CONSOLE_ROOT, 'src', 'crypto-shim.ts') } },
    oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      modulePreload: { polyfill: false },
      assetsInlineLimit: 0,
      sourcemap: false,
      reportCompressedSize: false,
      chunkSizeWarningLimit: 400,
    },
  };
}

/** The text files of a build worth compressing ahead of time (the server sends them as they are). */
const COMPRESSIBLE = /\.(?:js|css|html|svg|json)$/;
/** Smaller files are left alone: the headers of an encoded answer would cost about what they save. */
const MIN_COMPRESS_BYTES = 1024;

/**
 * Writes `name.br` (Brotli, quality 11) and `name.gz` (gzip, level 9) beside every text file of the
 * build of at least MIN_COMPRESS_BYTES, each only when smaller than the file: /console sends the
 * smallest encoding the browser accepts (src/http/console.ts) without compressing per request.
 * @returns the files written, relative to `dir`.
 */
export function precompress(dir: string): string[] {
  const written: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !COMPRESSIBLE.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = readFileSync(path);
    if (bytes.length < MIN_COMPRESS_BYTES) continue;
    const br = brotliCompressSync(bytes, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    });
    const gz = gzipSync(bytes, { level: 9 });
    for (const [ext, encoded] of [
      ['.br', br],
      ['.gz', gz],
    ] as const) {
      if (encoded.length >= bytes.length) continue;
      writeFileSync(path + ext, encoded);
      written.push((path + ext).slice(dir.length + 1));
    }
  }
  return written;
}

/** Builds the console into `outDir`; false (with one line on stdout) when Vite is not installed. */
export async function buildConsole(outDir: string = DEFAULT_OUT_DIR): Promise<boolean> {
  let vite: typeof import('vite');
  try {
    vite = await import('vite');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    console.log('console: not built (vite is a development dependency and is not installed); /console will say so.');
    return false;
  }
  await vite.build(consoleViteConfig(outDir));
  precompress(outDir);
  return true;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsole(process.argv[2] ? resolve(process.argv[2]) : DEFAULT_OUT_DIR);
}
