import type { FastifyReply, FastifyRequest } from 'fastify';
import { buildQuery, parseParams, phpInt } from '../query.ts';
import { setWireHeader } from '../wire.ts';

/** CONVENTIONS §7: default and largest page size. */
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
 * Works out which page to serve from `page` and `per-page` (CONVENTIONS §7): values are read like
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

/** The request's URL with `page` (1-based) set in place and `per-page` kept only when not the default. */
function pageUrl(request: FastifyRequest, base: string, page: number, size: number): string {
  const params = parseParams(request.rawQuery);
  params.set('page', String(page + 1));
  if (size !== DEFAULT_PAGE_SIZE) params.set('per-page', String(size));
  else params.delete('per-page');
  return `${base}?${buildQuery(params)}`;
}

/**
 * Sets X-Pagination-* and Link (CONVENTIONS §7). Rels: self; first and prev unless on the first
 * page; next and last unless on the last page.
 */
export function setPaginationHeaders(request: FastifyRequest, reply: FastifyReply, p: Page): void {
  const base = `${request.protocol}://${request.host}${request.routeOptions.url ?? ''}`;
  const links = [`<${pageUrl(request, base, p.page, p.size)}>; rel=self`];
  if (p.page > 0) {
    links.push(`<${pageUrl(request, base, 0, p.size)}>; rel=first`);
    links.push(`<${pageUrl(request, base, p.page - 1, p.size)}>; rel=prev`);
  }
  if (p.page < p.pageCount - 1) {
    links.push(`<${pageUrl(request, base, p.page + 1, p.size)}>; rel=next`);
    links.push(`<${pageUrl(request, base, p.pageCount - 1, p.size)}>; rel=last`);
  }
  setWireHeader(reply, 'X-Pagination-Total-Count', String(p.total));
  setWireHeader(reply, 'X-Pagination-Page-Count', String(p.pageCount));
  setWireHeader(reply, 'X-Pagination-Current-Page', String(p.page + 1));
  setWireHeader(reply, 'X-Pagination-Per-Page', String(p.size));
  setWireHeader(reply, 'Link', links.join(', '));
}
