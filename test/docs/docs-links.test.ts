/**
 * The documentation's links (issue 23): every relative link in README.md and docs/**\/*.md leads to a
 * file of the repository, every `#anchor` into a Markdown page to one of its headings, and every
 * `API.md §N` cited in the code or the docs to a section of docs/API.md.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { headingSlug } from '../../scripts/config-doc.ts';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** README.md and every Markdown file below docs/, relative to the root. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
  return ['README.md', ...docs.sort()];
}

/** The anchors of a Markdown page's headings (GitHub's slugs), outside fenced code. */
function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const prose = text.replace(/^```[\s\S]*?^```/gm, '');
  for (const m of prose.matchAll(/^#{1,6} (.+)$/gm)) found.add(headingSlug(m[1]!));
  return found;
}

test('every relative link in README.md and docs/**/*.md resolves, anchors included', () => {
  const problems: string[] = [];
  for (const page of pages()) {
    const text = readFileSync(join(ROOT, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
    for (const m of text.matchAll(/\]\(([^)\s]*)\)/g)) {
      const link = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // an absolute URL
      const [target, anchor] = link.split('#') as [string, string | undefined];
      const path = target === '' ? join(ROOT, page) : resolve(ROOT, dirname(page), target);
      if (!path.startsWith(ROOT + '/')) problems.push(`${page}: ${link} leaves the repository`);
      else if (!existsSync(path)) problems.push(`${page}: ${link} names a missing file`);
      else if (anchor && statSync(path).isFile() && path.endsWith('.md') && !anchors(readFileSync(path, 'utf8')).has(anchor)) {
        problems.push(`${page}: ${link} names a missing heading`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test('every `API.md §N` cited in the code and the docs is a section of docs/API.md', () => {
  const api = readFileSync(join(ROOT, 'docs/API.md'), 'utf8');
  const sections = new Set([...api.matchAll(/^#{2,3} (§\d+(?:\.\d+)?) /gm)].map((m) => m[1]!));
  assert.ok(sections.has('§1') && sections.has('§4.4'), 'docs/API.md has numbered sections');
  const missing = new Set<string>();
  const files = ['src', 'test', 'bench', 'scripts', 'docs'].flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|js|mjs|md)$/.test(e.name))
      .map((e) => join(e.parentPath, e.name)),
  );
  for (const file of [...files, join(ROOT, 'README.md')]) {
    const text = readFileSync(file, 'utf8');
    // `API.md §4 and §7`, `API.md §1.4, §7`: each number of the group is checked.
    for (const m of text.matchAll(/API\.md (§\d+(?:\.\d+)?(?:(?:, | and | or |–)§?\d+(?:\.\d+)?)*)/g)) {
      for (const n of m[1]!.matchAll(/\d+(?:\.\d+)?/g)) {
        if (!sections.has(`§${n[0]}`)) missing.add(`${relative(ROOT, file)}: API.md §${n[0]}`);
      }
    }
  }
  assert.deepEqual([...missing], []);
});
