/**
 * The web console's first load (issue 22; docs/guides/console.md): the time from navigation start
 * to the overview drawn, in headless Chromium (playwright-core), against `msgsvc serve` on a fresh
 * SQLite database holding only its first-start demo account.
 *
 * - The server: bin/msgsvc.js `serve` (the node flags of `npm start`, `--no-memory-reducer`) on a
 *   free port of 127.0.0.1, its database a new file in a temp dir, every other setting at its
 *   default (the demo account is created on this first start; its token is read off the banner the
 *   server prints). Nothing else runs against it. Where `taskset` works and the machine has two
 *   CPUs or more, the server is pinned to CPU 0 and this process (and so Chromium) to CPU 1.
 * - The browser is signed in already: an init script puts the demo token into sessionStorage,
 *   where the console keeps it, before the page's own scripts run; each load opens
 *   `/console` (the overview, the default page) as a signed-in tab does.
 * - "Overview drawn": the first moment (performance.now(), ms since the document's navigation
 *   start) a MutationObserver in the page sees both the credits figure (`[data-testid=credits]`)
 *   holding a number, which the overview shows only once its four /v1 calls have answered, and
 *   uPlot setting the `width` attribute of the chart's canvas (`.chart canvas`): uPlot sizes the
 *   canvas and strokes the series in one synchronous pass, and the observer's callback runs after
 *   that pass, so the chart is drawn by then (the next frame shows it).
 * - Loads: one first load right after the server started (its code still cold; reported alone),
 *   then `--loads` cold loads (default 10), each in a new browser context (empty cache, no open
 *   connection), then `--loads` warm loads: one context, loaded once (not counted), then reloaded
 *   (index.html is revalidated, `no-cache`; the hashed assets come from the cache).
 * - Per load: overview drawn (ms), DOMContentLoaded (domContentLoadedEventStart, ms), bytes
 *   transferred (the Resource Timing API's transferSize over the document and every resource:
 *   headers and bodies as sent; 0 for a cache hit) and the bodies' bytes (encodedBodySize, cache hits too), the
 *   number of requests (the document plus every resource entry; those served from the cache
 *   counted apart), the answers with a status of 400 or more (a 429 would mean the rate limit
 *   slowed the load), and the server's CPU time from just before the navigation to the overview
 *   drawn and the load event fired (on-CPU time of every thread of the server and its children,
 *   /proc/PID/task/TID/schedstat, in ns). The server's idle CPU over one second before the loads is
 *   reported beside (its loops poll on their own). p50 and max of each over the cold and the warm
 *   loads.
 *
 *   node --import tsx bench/console.ts [--loads 10] [--app DIR] [--chromium /usr/bin/chromium]
 *
 * `--app DIR` runs that copy of msgsvc (bench/run.ts passes its --build copy, whose console is
 * built here when it has none). Without Chromium (or without a built console in the checkout: `npm
 * run build`) it prints why, and a result saying skipped, and exits 0. The last line is
 * `CONSOLE {json}` for `npm run bench`.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freePort, msgsvcStartFlags, pinSelf, startServer, stopAll, type Server } from './lib/procs.ts';
import { chooseEntry } from '../bin/entry.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    loads: { type: 'string', default: '10' },
    app: { type: 'string' },
    chromium: { type: 'string', default: process.env.MSGSVC_BENCH_CHROMIUM ?? '/usr/bin/chromium' },
  },
  allowPositionals: false,
});
const LOADS = Number(flags.loads);
if (!Number.isSafeInteger(LOADS) || LOADS < 1) throw new Error(`--loads must be a positive whole number, not ${flags.loads}`);
const CHROMIUM = flags.chromium;
const APP = flags.app ? resolve(flags.app) : ROOT;
/** Where the console keeps the token (console/src/api.ts). */
const TOKEN_KEY = 'msgsvc.console.token';
/** The page calls this binding with the overview-drawn time. */
const DRAWN_BINDING = '__msgsvcBenchOverviewDrawn';
/** Longest wait for one load's overview. */
const LOAD_TIMEOUT_MS = 30_000;

const START_FLAGS = msgsvcStartFlags(ROOT);
const NODE_ARGS = ['--no-memory-reducer', ...START_FLAGS];

/** One load's figures (times in ms since the document's navigation start; CPU in ms; sizes in bytes). */
export interface ConsoleLoad {
  overviewMs: number;
  domContentLoadedMs: number;
  /** Sum of transferSize: headers and bodies as they came over the wire; 0 for a cache hit. */
  transferBytes: number;
  /** Sum of encodedBodySize: the bodies as sent (compressed where they were), those from the cache included. */
  bodyBytes: number;
  /** The document and every resource entry (scripts, styles, images, the /v1 calls). */
  requests: number;
  /** Of `requests`, those served from the browser's cache (transferSize 0, a body). */
  cachedRequests: number;
  /** Answers with a status of 400 or more (429: the rate limit slowed the load). */
  failedResponses: number;
  /** The server's on-CPU time from just before the navigation to the overview drawn and the load event. */
  serverCpuMs: number;
}

/** p50 and max of one figure over a series of loads. */
export interface Spread {
  p50: number;
  max: number;
}

/** A series of loads (cold or warm): p50 and max of each figure, and each load's figures. */
export interface ConsoleSeries {
  loads: number;
  overviewMs: Spread;
  domContentLoadedMs: Spread;
  transferBytes: Spread;
  bodyBytes: Spread;
  requests: Spread;
  serverCpuMs: Spread;
  failedResponses: number;
  runs: ConsoleLoad[];
}

/** What the `CONSOLE {json}` line holds. `skipped` (and nothing measured) when it could not run here. */
export interface ConsoleBenchResult {
  skipped?: string;
  chromium?: string;
  /** What bin/msgsvc.js ran: the build (dist) or the sources through tsx (src). */
  runs?: 'dist' | 'src';
  pinned?: boolean;
  /** The first load after the server started (cold browser, cold server code). */
  firstLoad?: ConsoleLoad;
  cold?: ConsoleSeries;
  warm?: ConsoleSeries;
  /** The server's CPU over one idle second before the loads, in ms per second. */
  serverIdleCpuMsPerSecond?: number;
  loadAverage?: { start: number[]; end: number[] };
  seconds: number;
}

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const load1 = () => loadavg().map((x) => round(x, 2));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function spread(xs: number[]): Spread {
  return { p50: round(median(xs)), max: round(Math.max(...xs)) };
}

function series(runs: ConsoleLoad[]): ConsoleSeries {
  const of = (key: keyof ConsoleLoad) => spread(runs.map((r) => r[key]));
  return {
    loads: runs.length,
    overviewMs: of('overviewMs'),
    domContentLoadedMs: of('domContentLoadedMs'),
    transferBytes: of('transferBytes'),
    bodyBytes: of('bodyBytes'),
    requests: of('requests'),
    serverCpuMs: of('serverCpuMs'),
    failedResponses: runs.reduce((n, r) => n + r.failedResponses, 0),
    runs,
  };
}

/** The process `pid` and its descendants (a cluster's workers), from /proc/PID/task/TID/children. */
function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const tid of readdirSync(`/proc/${out[i]}/task`)) {
        const children = readFileSync(`/proc/${out[i]}/task/${tid}/children`, 'utf8').trim();
        if (children) out.push(...children.split(/\s+/).map(Number));
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/**
 * On-CPU time so far of every live thread of `pid` and its descendants, in ns (schedstat's first
 * field: ns resolution, where /proc/PID/stat counts 10 ms ticks; a load costs the server a few ms).
 */
function serverCpuNs(pid: number): number {
  let ns = 0;
  for (const p of processTree(pid)) {
    try {
      for (const tid of readdirSync(`/proc/${p}/task`)) {
        try {
          ns += Number(readFileSync(`/proc/${p}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
        } catch {
          // Thread ended meanwhile.
        }
      }
    } catch {
      // Process ended meanwhile.
    }
  }
  return ns;
}

/**
 * The script each document of a context runs before its own: the token into sessionStorage, and
 * the observer that reports "overview drawn" (see the file's comment) through DRAWN_BINDING once.
 */
function initScript(token: string): string {
  return `(() => {
  try { sessionStorage.setItem(${JSON.stringify(TOKEN_KEY)}, ${JSON.stringify(token)}); } catch { return; }
  let chartSized = false;
  const observer = new MutationObserver((records) => {
    for (const r of records)
      if (r.type === 'attributes' && r.attributeName === 'width' && r.target instanceof HTMLCanvasElement && r.target.closest('.chart'))
        chartSized = true;
    const credits = document.querySelector('[data-testid="credits"]');
    if (!chartSized || !credits || !/^\\d+$/.test((credits.textContent || '').trim())) return;
    const ms = performance.now();
    observer.disconnect();
    window[${JSON.stringify(DRAWN_BINDING)}](ms);
  });
  observer.observe(document, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['width'] });
})();`;
}

/** Resource Timing of the page as it is now (evaluated in the page; returns JSON). */
const TIMING_SCRIPT = `JSON.stringify((() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const resources = performance.getEntriesByType('resource');
  const all = [nav, ...resources];
  return {
    domContentLoadedMs: nav.domContentLoadedEventStart,
    transferBytes: all.reduce((n, e) => n + e.transferSize, 0),
    bodyBytes: all.reduce((n, e) => n + e.encodedBodySize, 0),
    requests: all.length,
    cachedRequests: all.filter((e) => e.transferSize === 0 && e.decodedBodySize > 0).length,
  };
})())`;

/** A browser context with the token and the observer, and a page whose loads `measure` times. */
class Tab {
  private waiting: ((ms: number) => void) | undefined;
  private failed = 0;
  private constructor(
    readonly context: BrowserContext,
    readonly page: Page,
  ) {}

  static async open(browser: Browser, token: string): Promise<Tab> {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(LOAD_TIMEOUT_MS);
    const tab = new Tab(context, page);
    // Both apply to the page's next documents (it is still about:blank).
    await context.exposeBinding(DRAWN_BINDING, (_source, ms: number) => tab.waiting?.(ms));
    await context.addInitScript(initScript(token));
    page.on('response', (response) => {
      if (response.status() >= 400) tab.failed++;
    });
    return tab;
  }

  /**
   * Runs `navigate` (a goto or a reload) and returns the load's figures once the overview is drawn
   * and the load event fired. Throws when the overview is not drawn within LOAD_TIMEOUT_MS.
   */
  async measure(server: Server, navigate: (page: Page) => Promise<unknown>): Promise<ConsoleLoad> {
    this.failed = 0;
    let timer: NodeJS.Timeout | undefined;
    const drawn = new Promise<number>((resolveDrawn, reject) => {
      this.waiting = resolveDrawn;
      timer = setTimeout(() => reject(new Error(`the overview was not drawn within ${LOAD_TIMEOUT_MS} ms`)), LOAD_TIMEOUT_MS);
    });
    const cpuBefore = serverCpuNs(server.pid);
    try {
      // navigate resolves at the load event (playwright's default waitUntil).
      const [overviewMs] = await Promise.all([drawn, navigate(this.page)]);
      const cpuNs = serverCpuNs(server.pid) - cpuBefore;
      const timing = JSON.parse(await this.page.evaluate<string>(TIMING_SCRIPT)) as Omit<
        ConsoleLoad,
        'overviewMs' | 'serverCpuMs' | 'failedResponses'
      >;
      return {
        overviewMs: round(overviewMs),
        domContentLoadedMs: round(timing.domContentLoadedMs),
        transferBytes: timing.transferBytes,
        bodyBytes: timing.bodyBytes,
        requests: timing.requests,
        cachedRequests: timing.cachedRequests,
        failedResponses: this.failed,
        serverCpuMs: round(cpuNs / 1e6, 2),
      };
    } finally {
      clearTimeout(timer);
      this.waiting = undefined;
    }
  }

  close(): Promise<void> {
    return this.context.close();
  }
}

/** Waits until the server's stdout (the file `path`) holds the demo banner's token; throws after `ms`. */
async function demoToken(path: string, ms = 15_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = /Access token \(shown once; only its hash is stored\): (\S+)/.exec(readFileSync(path, 'utf8'));
    if (m) return m[1]!;
    if (Date.now() > deadline) throw new Error('msgsvc serve printed no demo token (is MSGSVC_DEMO=0 set?)');
    await sleep(100);
  }
}

function fmtSeries(name: string, s: ConsoleSeries): string {
  return (
    `${name}: overview drawn p50 ${s.overviewMs.p50} ms (max ${s.overviewMs.max}), DOMContentLoaded p50 ${s.domContentLoadedMs.p50} ms ` +
    `(max ${s.domContentLoadedMs.max}), ${round(s.transferBytes.p50 / 1024)} KiB transferred in ${s.requests.p50} requests (p50), ` +
    `server CPU p50 ${s.serverCpuMs.p50} ms (max ${s.serverCpuMs.max})${s.failedResponses ? `, ${s.failedResponses} answers ≥ 400` : ''}`
  );
}

async function main(): Promise<ConsoleBenchResult> {
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  if (!existsSync(CHROMIUM)) return { skipped: `chromium not found at ${CHROMIUM} (apt-get install chromium)`, seconds: 0 };
  const consoleDir = join(APP, 'dist/console');
  if (!existsSync(join(consoleDir, 'index.html'))) {
    if (APP === ROOT) return { skipped: 'the console is not built (npm run build)', seconds: 0 };
    // A --build copy (bench/lib/build.ts) compiles src/ only: its console is built here.
    const { buildConsole } = await import('../scripts/build-console.ts');
    if (!(await buildConsole(consoleDir))) return { skipped: 'the console could not be built (Vite missing)', seconds: seconds() };
  }

  // Server on CPU 0, this process and Chromium on CPU 1, as bench/run.ts places server and client.
  // os.cpus() counts every CPU, not only those this process may use (bench/run.ts pins it to one).
  const pinned = cpus().length >= 2 && spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
  if (pinned) pinSelf(1);

  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-bench-console-'));
  let browser: Browser | undefined;
  try {
    const loadStart = load1();
    const stdoutPath = join(dir, 'stdout.log');
    const stdoutFd = openSync(stdoutPath, 'w');
    const port = await freePort();
    const server = await startServer({
      name: 'msgsvc',
      nodeArgs: NODE_ARGS,
      args: [join(APP, 'bin/msgsvc.js'), 'serve', '--port', String(port)],
      env: { DATABASE_URL: join(dir, 'msgsvc.db') },
      ...(pinned ? { cpu: 0 } : {}),
      port,
      readyPath: '/healthz',
      stdout: stdoutFd,
    }).finally(() => closeSync(stdoutFd));
    const token = await demoToken(stdoutPath);
    const page = await fetch(`${server.url}/console`);
    if (page.status !== 200) throw new Error(`GET /console answered ${page.status}`);
    await page.arrayBuffer();

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    const url = `${server.url}/console`;

    // The server's own idle CPU (its loops), to read the per-load figures against.
    await sleep(500);
    const idleBefore = serverCpuNs(server.pid);
    await sleep(1000);
    const serverIdleCpuMsPerSecond = round((serverCpuNs(server.pid) - idleBefore) / 1e6, 2);

    const cold = async (): Promise<ConsoleLoad> => {
      const tab = await Tab.open(browser!, token);
      try {
        return await tab.measure(server, (p) => p.goto(url));
      } finally {
        await tab.close();
      }
    };
    const firstLoad = await cold();
    console.log(`first load: overview drawn at ${firstLoad.overviewMs} ms, server CPU ${firstLoad.serverCpuMs} ms`);
    const coldRuns: ConsoleLoad[] = [];
    for (let i = 0; i < LOADS; i++) {
      // A pause, so the server's work after the previous load (its log lines) is not counted in this one.
      await sleep(100);
      coldRuns.push(await cold());
    }
    const warmRuns: ConsoleLoad[] = [];
    const tab = await Tab.open(browser, token);
    try {
      await tab.measure(server, (p) => p.goto(url));
      for (let i = 0; i < LOADS; i++) {
        await sleep(100);
        warmRuns.push(await tab.measure(server, (p) => p.reload()));
      }
    } finally {
      await tab.close();
    }
    const result: ConsoleBenchResult = {
      chromium: browser.version(),
      runs: chooseEntry(APP).entry,
      pinned,
      firstLoad,
      cold: series(coldRuns),
      warm: series(warmRuns),
      serverIdleCpuMsPerSecond,
      loadAverage: { start: loadStart, end: load1() },
      seconds: seconds(),
    };
    console.log(fmtSeries('cold', result.cold!));
    console.log(fmtSeries('warm', result.warm!));
    return result;
  } finally {
    await browser?.close();
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  const result = await main();
  if (result.skipped) console.log(`console bench skipped: ${result.skipped}`);
  // One machine-readable line for npm run bench (bench/run.ts), which records it in its results.
  console.log(`CONSOLE ${JSON.stringify(result)}`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}
