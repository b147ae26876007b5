import fc from 'fast-check';
import { buildQuery, parseParams } from '../../src/http/query.ts';
import { setPaginationHeaders } from '../../src/http/serializers/pagination.ts';
function old(rawQuery: string, base: string, page: number, size: number) {
  const params = parseParams(rawQuery);
  params.set('page', String(page + 1));
  if (size !== 100) params.set('per-page', String(size)); else params.delete('per-page');
  return `${base}?${buildQuery(params)}`;
}
fc.assert(fc.property(fc.array(fc.tuple(fc.constantFrom('page', 'per-page', 'a', 'b[]', 'c[x]', 'access_token', 'p a', 'x.y', '%70age', ''), fc.string()), { maxLength: 6 }), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 60 }), (pairs, page, size, pageCount) => {
  const raw = pairs.map(([k, v]) => `${encodeURIComponent(k).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${encodeURIComponent(v)}`).join('&');
  const headers: Record<string, string> = {};
  const req: any = { queryParams: parseParams(raw), rawQuery: raw, protocol: 'http', host: 'h', routeOptions: { url: '/v1/x' } };
  const reply: any = { raw: { setHeader: (k: string, v: string) => (headers[k] = v) } };
  const p = Math.min(page, pageCount - 1);
  setPaginationHeaders(req, reply, { page: p, size, pageCount, total: pageCount * size, offset: 0 });
  const base = 'http://h/v1/x';
  const links = [`<${old(raw, base, p, size)}>; rel=self`];
  if (p > 0) { links.push(`<${old(raw, base, 0, size)}>; rel=first`); links.push(`<${old(raw, base, p - 1, size)}>; rel=prev`); }
  if (p < pageCount - 1) { links.push(`<${old(raw, base, p + 1, size)}>; rel=next`); links.push(`<${old(raw, base, pageCount - 1, size)}>; rel=last`); }
  if (headers.Link !== links.join(', ')) throw new Error(`${raw}\n${headers.Link}\n${links.join(', ')}`);
}), { numRuns: 20000 });
console.log('ok');
