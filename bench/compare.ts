/**
 * Before and after: two result files of `npm run bench` side by side, as the Markdown table that
 * docs/PERFORMANCE.md shows (msgsvc's CPU per request, req/s, msgsvc ÷ floor, peak RSS).
 *
 *   node --import tsx bench/compare.ts bench/results/BEFORE.json bench/results/AFTER.json
 *
 * Each run measured msgsvc against the ceiling and the floor in the same alternating rounds, so
 * the ratios compare across runs better than raw req/s on a machine that other work shares.
 */
import { readFileSync } from 'node:fs';
import type { BenchResult } from './report.ts';

const [beforeFile, afterFile] = process.argv.slice(2);
if (!beforeFile || !afterFile) {
  console.error('usage: bench/compare.ts BEFORE.json AFTER.json');
  process.exit(2);
}
const before = JSON.parse(readFileSync(beforeFile, 'utf8')) as BenchResult;
const after = JSON.parse(readFileSync(afterFile, 'utf8')) as BenchResult;

const human = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000} M` : n >= 1000 ? `${n / 1000} k` : String(n));
const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n)
    ? '–'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const lines = [
  `| Scenario | Contacts | CPU µs/req before → after | req/s before → after | msgsvc ÷ floor before → after (by CPU) |`,
  '|---|---:|---:|---:|---:|',
];
for (const a of after.scenarios) {
  const b = before.scenarios.find((s) => s.scenario === a.scenario && s.contacts === a.contacts);
  if (!b) continue;
  const cpu = `${fmt(b.msgsvc.cpuMicrosPerRequest, 1)} → ${fmt(a.msgsvc.cpuMicrosPerRequest, 1)}`;
  const rps = `${fmt(b.msgsvc.medianRps)} → ${fmt(a.msgsvc.medianRps)}`;
  const floor =
    a.floorRatio !== undefined && b.floorRatio !== undefined
      ? `${b.floorRatio.toFixed(2)} (${fmt(b.floorCpuRatio, 2)}) → **${a.floorRatio.toFixed(2)}** (${fmt(a.floorCpuRatio, 2)})`
      : '–';
  lines.push(`| ${a.title} | ${human(a.contacts)} | ${cpu} | ${rps} | ${floor} |`);
}
lines.push('');
lines.push('| Dataset | msgsvc peak RSS before → after |');
lines.push('|---|---:|');
for (const d of after.datasets) {
  const b = before.datasets.find((x) => x.contacts === d.contacts);
  lines.push(`| ${human(d.contacts)} contacts | ${fmt(b?.msgsvcPeakRssMiB)} → ${fmt(d.msgsvcPeakRssMiB)} MiB |`);
}
console.log(lines.join('\n'));
