import type { FastifyReply, FastifyRequest } from 'fastify';
import { buildPhpQueryPart, parsePhpQuery, phpInt } from '../query.ts';
import { setWireHeader } from '../wire.ts';

/** API.md §5: default and largest page size. */
export const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 100;

/** The page a list request is served: 0-based `page`, effective `size`, and the SQL offset. */
export interface Page {
  page: number;
  size: number;
  pageCount: number;
  total: number;
  offset: number;
}

/**
 * Works out which page to serve from `page` and `per-page` (API.md §5): values are read like
 * PHP's (int) and clamped, never rejected; a page past the end serves the last page.
 */
export function resolvePage(request: FastifyRequest, total: number): Page {
  const params = request.queryParams;
  const size = Math.min(Math.max(phpInt(params.get('per-page'), DEFAULT_PAGE_SIZE), 1), MAX_PAGE_SIZE);
  const pageCount = total === 0 ? 0 : Math.ceil(total / size);
  let page = phpInt(params.get('page'), 1) - 1;
  if (page >= pageCount) page = pageCount - 1;
  if (page < 0) page = 0;
  return { page, size, pageCount, total, offset: page * size };
}

/**
 * The request's URL with `page` (1-based) set in place and `per-page` kept only when not the
 * default, for any page: the query is encoded once per request, only the page number varies.
 * The query is rebuilt from PHP's parse of the raw query string, as http_build_query would write
 * it (API.md §5): nested keys stay nested, bytes stay bytes, every parameter is kept.
 */
function pageUrls(request: FastifyRequest, base: string, size: number): (page: number) => string {
  const params = parsePhpQuery(request.rawQuery);
  params.set('page', '');
  if (size !== DEFAULT_PAGE_SIZE) params.set('per-page', String(size));
  else params.delete('per-page');
  let before = '';
  let after = '';
  let seenPage = false;
  for (const [key, value] of params) {
    if (key === 'page') {
      seenPage = true;
      continue;
    }
    const part = buildPhpQueryPart(key, value);
    if (part === '') continue;
    if (seenPage) after += `&${part}`;
    else before += `${part}&`;
  }
  const prefix = `${base}?${before}page=`;
  return (page) => `${prefix}${page + 1}${after}`;
}

/**
 * Sets X-Pagination-* and Link (API.md §5). Rels: self; first and prev unless on the first
 * page; next and last unless on the last page.
 */
export function setPaginationHeaders(request: FastifyRequest, reply: FastifyReply, p: Page): void {
  // An HTTP/1.0 request may come without Host: name the address it reached instead.
  const local = request.socket.localAddress ?? '127.0.0.1';
  const host = request.host || `${local.includes(':') ? `[${local}]` : local}:${request.socket.localPort ?? ''}`;
  const url = pageUrls(request, `${request.protocol}://${host}${request.routeOptions.url ?? ''}`, p.size);
  let links = `<${url(p.page)}>; rel=self`;
  if (p.page > 0) links += `, <${url(0)}>; rel=first, <${url(p.page - 1)}>; rel=prev`;
  if (p.page < p.pageCount - 1) links += `, <${url(p.page + 1)}>; rel=next, <${url(p.pageCount - 1)}>; rel=last`;
  setWireHeader(reply, 'X-Pagination-Total-Count', String(p.total));
  setWireHeader(reply, 'X-Pagination-Page-Count', String(p.pageCount));
  setWireHeader(reply, 'X-Pagination-Current-Page', String(p.page + 1));
  setWireHeader(reply, 'X-Pagination-Per-Page', String(p.size));
  setWireHeader(reply, 'Link', links);
}
