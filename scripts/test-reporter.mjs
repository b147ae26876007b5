// npm test's reporter: node's own TAP reporter, unchanged, plus one thing. Just before the closing
// summary (# tests … # duration_ms) it repeats every failed test in a few lines: its file, its name
// and the first lines of its error. A failure in a run of 1,900 tests is otherwise somewhere in the
// middle of 40,000 lines, and a CI log that keeps only its end shows the count and not the test.
// The output still ends with node's summary, line for line.
import { tap } from 'node:test/reporters';
import { relative } from 'node:path';

/** At most this many lines of each failure's error message. */
const ERROR_LINES = 12;

/** @param {unknown} error */
function describe(error) {
  // A test's own failure arrives as ERR_TEST_FAILURE whose cause is what the test threw.
  const cause = error && typeof error === 'object' && 'cause' in error && error.cause ? error.cause : error;
  const text = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  return text.split('\n').slice(0, ERROR_LINES);
}

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* failuresBeforeSummary(source) {
  /** @type {string[]} */
  const failures = [];
  let repeated = false;
  async function* events() {
    for await (const event of source) {
      if (event.type === 'test:fail' && event.data.details?.error?.failureType !== 'subtestsFailed') {
        const where = event.data.file ? `${relative(process.cwd(), event.data.file)}:${event.data.line ?? '?'}` : '?';
        failures.push(`not ok: ${where} ${event.data.name}`, ...describe(event.data.details?.error).map((line) => `  ${line}`));
      }
      if (!repeated && event.type === 'test:diagnostic' && event.data.nesting === 0 && /^tests \d+$/.test(event.data.message)) {
        repeated = true;
        if (failures.length > 0) {
          const count = failures.filter((l) => l.startsWith('not ok: ')).length;
          const lines = [`${count} failed test(s), repeated here (a parent that failed only by its subtests is not):`, ...failures];
          for (const message of lines) yield { type: 'test:diagnostic', data: { nesting: 0, message } };
        }
      }
      yield event;
    }
  }
  yield* tap(events());
}
