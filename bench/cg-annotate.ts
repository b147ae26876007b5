/**
 * Instructions per request by function, JIT code included: a callgrind dump of one window
 * (bench/instructions.ts --keep-dumps DIR) read with `callgrind_annotate`, its unnamed code
 * addresses (V8's generated code, `???:0x…`) named from the perf map that
 * `node --perf-basic-prof` writes (/tmp/perf-<pid>.map: start, size and name of each code object).
 *
 *   node --import tsx bench/cg-annotate.ts DUMP [--map /tmp/perf-PID.map] [--requests 1000] [--top 60]
 *   node --import tsx bench/cg-annotate.ts DUMP_A --diff DUMP_B …   (B − A by function)
 *
 * Prints, per function (JS functions by their V8 name and script position, native ones by symbol),
 * instructions per request, largest first. A perf map entry covers its code object only while the
 * object lives; code moved or freed before the dump is named by whatever lies there now, so read
 * small entries with care.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface MapEntry {
  start: bigint;
  end: bigint;
  name: string;
}

function readPerfMap(file: string): MapEntry[] {
  const entries: MapEntry[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (!m) continue;
    const start = BigInt(`0x${m[1]}`);
    entries.push({ start, end: start + BigInt(`0x${m[2]}`), name: m[3]! });
  }
  // Later entries win: code re-generated at the same address replaces the older object.
  return entries.reverse();
}

/** Function → instructions in the dump (exclusive), JIT addresses named through the map. */
function byFunction(dump: string, map: MapEntry[] | undefined): Map<string, number> {
  const text = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', dump], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^\s*([\d,]+)\s+\([^)]*\)\s+(.+)$/.exec(line);
    if (!m || m[2]!.includes('PROGRAM TOTALS')) continue;
    const count = Number(m[1]!.replace(/,/g, ''));
    let name = m[2]!.replace(/^\?\?\?:/, '').replace(/ \[[^\]]*\]$/, '');
    const addr = /^0x([0-9a-f]+)$/i.exec(name);
    if (addr && map) {
      const a = BigInt(`0x${addr[1]}`);
      const hit = map.find((e) => a >= e.start && a < e.end);
      name = hit ? `JS ${hit.name}` : `JIT? ${name}`;
    }
    out.set(name, (out.get(name) ?? 0) + count);
  }
  return out;
}

const { values: flags, positionals } = parseArgs({
  options: {
    map: { type: 'string' },
    'diff-map': { type: 'string' },
    diff: { type: 'string' },
    requests: { type: 'string', default: '1000' },
    top: { type: 'string', default: '60' },
  },
  allowPositionals: true,
});
const dump = positionals[0];
if (!dump || !existsSync(dump)) throw new Error('usage: cg-annotate.ts DUMP [--map FILE] [--diff DUMP_B] [--requests N] [--top N]');
const pidOf = (file: string) => /pid:\s*(\d+)/.exec(readFileSync(file, 'utf8').slice(0, 4096))?.[1];
const mapFor = (file: string, given?: string) => {
  const path = given ?? `/tmp/perf-${pidOf(file)}.map`;
  return existsSync(path) ? readPerfMap(path) : undefined;
};
const requests = Number(flags.requests);
const a = byFunction(dump, mapFor(dump, flags.map));
const rows: [string, number][] = [];
if (flags.diff) {
  const b = byFunction(flags.diff, mapFor(flags.diff, flags['diff-map']));
  for (const name of new Set([...a.keys(), ...b.keys()])) rows.push([name, ((b.get(name) ?? 0) - (a.get(name) ?? 0)) / requests]);
  rows.sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]));
} else {
  for (const [name, n] of a) rows.push([name, n / requests]);
  rows.sort((x, y) => y[1] - x[1]);
}
const total = [...a.values()].reduce((s, n) => s + n, 0) / requests;
process.stdout.write(`total ${Math.round(total).toLocaleString('en-US')} instructions per request (${dump})\n`);
for (const [name, n] of rows.slice(0, Number(flags.top)))
  process.stdout.write(`${Math.round(n).toLocaleString('en-US').padStart(9)}  ${name.slice(0, 160)}\n`);
