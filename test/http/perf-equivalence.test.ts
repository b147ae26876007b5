/**
 * Hot-path rewrites must not change a byte on the wire: each is checked here against the plain
 * implementation it replaced, on random inputs.
 * - Link headers built from one encoding of the query (src/http/serializers/pagination.ts), against
 *   PHP's parse and http_build_query per rel (API.md §5);
 * - UTC timestamps from a per-day cache and arithmetic (src/lib/time.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createTimeFormat } from '../../src/lib/time.ts';
import { buildPhpQuery, parseParams, parsePhpQuery } from '../../src/http/query.ts';
import { setPaginationHeaders } from '../../src/http/serializers/pagination.ts';

/**
 * The Link value written the plain way: parse the raw query as PHP does and rebuild it with
 * http_build_query for every rel (API.md §5: nested keys stay nested, bytes stay bytes).
 */
function referenceLink(rawQuery: string, base: string, page: number, size: number, pageCount: number): string {
  const url = (p: number) => {
    const params = parsePhpQuery(rawQuery);
    params.set('page', String(p + 1));
    if (size !== 100) params.set('per-page', String(size));
    else params.delete('per-page');
    return `${base}?${buildPhpQuery(params)}`;
  };
  const links = [`<${url(page)}>; rel=self`];
  if (page > 0) links.push(`<${url(0)}>; rel=first`, `<${url(page - 1)}>; rel=prev`);
  if (page < pageCount - 1) links.push(`<${url(page + 1)}>; rel=next`, `<${url(pageCount - 1)}>; rel=last`);
  return links.join(', ');
}

test('Link headers equal the per-rel http_build_query re-encoding they replaced', () => {
  const key = fc.constantFrom(
    'page',
    'per-page',
    'a',
    'b[]',
    'c[x]',
    'c[x][]',
    'b[0]',
    'e[',
    'page[x]',
    'access_token',
    'p a',
    'x.y',
    '%70age',
    '',
    'ü',
  );
  // Values as sent: any text %-encoded, or raw bytes and broken escapes.
  const value = fc.oneof(fc.string().map(encodeURIComponent), fc.constantFrom('%FF', '%C3%A9', '%', '%zz', '+', 'a%2Bb'));
  fc.assert(
    fc.property(
      fc.array(fc.tuple(key, value), { maxLength: 6 }),
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 1, max: 100 }),
      fc.integer({ min: 1, max: 60 }),
      (pairs, wanted, size, pageCount) => {
        const raw = pairs.map(([k, v]) => `${encodeURIComponent(k).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${v}`).join('&');
        const headers: Record<string, string> = {};
        const request = {
          queryParams: parseParams(raw),
          rawQuery: raw,
          protocol: 'http',
          host: 'h:1',
          socket: {},
          routeOptions: { url: '/v1/x' },
        };
        const reply = { raw: { setHeader: (k: string, v: string) => (headers[k] = v) } };
        const page = Math.min(wanted, pageCount - 1);
        setPaginationHeaders(request as never, reply as never, { page, size, pageCount, total: pageCount * size, offset: page * size });
        assert.equal(headers.Link, referenceLink(raw, 'http://h:1/v1/x', page, size, pageCount));
      },
    ),
    { numRuns: 5000 },
  );
});

test('UTC timestamps equal the Date-based rendering they replaced', () => {
  const f = createTimeFormat('UTC');
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const reference = (s: number, sep: string) => {
    const d = new Date(s * 1000);
    return `${pad(d.getUTCFullYear(), 4)}${sep}${pad(d.getUTCMonth() + 1)}${sep}${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  };
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: -62_135_596_800, max: 253_402_300_799 }),
        fc.integer({ min: -8.64e12, max: 8.64e12 }),
        fc.integer({ min: -9e15, max: 9e15 }),
        fc.double({ min: -1e10, max: 1e10 }),
      ),
      (s) => {
        assert.equal(f.dateTime(s), reference(s, '-'));
        assert.equal(f.scheduleDateTime(s), reference(s, ':'));
      },
    ),
    { numRuns: 50_000 },
  );
});
