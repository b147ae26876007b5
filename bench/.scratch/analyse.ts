import { readFileSync } from 'node:fs';
const file = process.argv[2]!; const top = Number(process.argv[3] ?? 40); const filter = process.argv[4];
interface N { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
const p = JSON.parse(readFileSync(file, 'utf8')) as { nodes: N[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const where = (url: string) => { const nm = url.lastIndexOf('node_modules/'); if (nm !== -1) { const r = url.slice(nm + 13).split('/'); return r[0]!.startsWith('@') ? r[0] + '/' + r[1] : r[0]!; } const s = url.indexOf('/src/'); return s !== -1 ? url.slice(s + 1) : url || '(native)'; };
const key = (n: N) => `${n.callFrame.functionName || '(anon)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const inc = new Map<string, number>(); const sf = new Map<string, number>();
for (const [id, t] of self) {
  sf.set(key(byId.get(id)!), (sf.get(key(byId.get(id)!)) ?? 0) + t);
  const seen = new Set<string>();
  for (let c: number | undefined = id; c !== undefined; c = parent.get(c)) { const k = key(byId.get(c)!); if (seen.has(k)) continue; seen.add(k); inc.set(k, (inc.get(k) ?? 0) + t); }
}
const pct = (t: number) => `${((t / total) * 100).toFixed(1).padStart(5)}%`;
console.log('--- inclusive');
for (const [k, t] of [...inc].filter(([k]) => !filter || new RegExp(filter).test(k)).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(pct(t), k);
console.log('--- self');
for (const [k, t] of [...sf].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(pct(t), k);
