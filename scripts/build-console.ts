/**
 * Builds the web console (console/, Vite + Preact) into dist/console, or into the directory given as
 * the first argument: `node --import tsx scripts/build-console.ts [outDir]`. `npm run build` runs
 * it after the server's build. Vite is a development dependency: on a host installed with
 * `npm install --omit=dev` it is absent, and this prints one line and exits 0 (/console then says
 * how to build it).
 */
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
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
  return true;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsole(process.argv[2] ? resolve(process.argv[2]) : DEFAULT_OUT_DIR);
}
