import { useEffect, useState } from 'preact/hooks';
import { errorText, pagination, type Pagination } from '../api.ts';
import { setPlace, usePlace } from '../route.ts';

/** One page of a list operation as the typed client answers it. */
export interface PageAnswer<T> {
  data?: T[];
  error?: unknown;
  response: Response;
}

/** A list page's state: its rows (undefined while loading), its pagination, an error line. */
export interface PagedList<T> {
  rows: T[] | undefined;
  pages: Pagination;
  error: string | undefined;
  page: number;
  setPage: (page: number) => void;
  /** Loads the current page again (after an edit). */
  reload: () => void;
}

/** Where a list keeps its page in the URL (list.tsx's default is `page`; a second list on a page needs its own). */
export interface PagedListOptions {
  /** The URL parameter holding the page number (`page` by default); `null` keeps it in the component only (a list inside a card). */
  param?: string | null;
  /** Reloads every this many ms while the page is open (statuses that move on their own). */
  refreshMs?: number;
}

/**
 * Loads page `page` of a list operation (docs/API.md §5: `page`, `per-page` and the
 * X-Pagination-* headers) with `load`, again whenever `deps` change, the page changes, or
 * `reload()` is called. The page number lives in the URL (route.ts), so Back, a reload and a
 * shared link return to it.
 */
export function usePagedList<T>(
  load: (page: number) => Promise<PageAnswer<T>>,
  deps: readonly unknown[],
  options: PagedListOptions = {},
): PagedList<T> {
  const param = options.param === undefined ? 'page' : options.param;
  const place = usePlace();
  const [localPage, setLocalPage] = useState(1);
  const urlPage = param === null ? localPage : Math.max(1, Math.floor(Number(place.params.get(param) ?? '1')) || 1);
  const page = urlPage;
  const [tick, setTick] = useState(0);
  const [rows, setRows] = useState<T[] | undefined>();
  const [pages, setPages] = useState<Pagination>({ page: 1, pages: 0, total: 0, perPage: 0 });
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    const run = () =>
      load(page)
        .then(({ data, error, response }) => {
          if (!live) return;
          if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
          setError(undefined);
          setRows(data);
          setPages(pagination(response));
        })
        .catch(() => live && setError('The server could not be reached.'));
    void run();
    const timer = options.refreshMs === undefined ? undefined : setInterval(() => void run(), options.refreshMs);
    return () => {
      live = false;
      if (timer !== undefined) clearInterval(timer);
    };
  }, [page, tick, ...deps]);
  const setPage = (next: number) => {
    if (param === null) setLocalPage(next);
    else setPlace({ [param]: next <= 1 ? undefined : String(next) });
  };
  return { rows, pages, error, page, setPage, reload: () => setTick((n) => n + 1) };
}

/** "1–20 of 250 contacts" for a page of a list (or "No contacts"). */
export function rangeText(pages: Pagination, shown: number, noun: string): string {
  if (pages.total === 0 || shown === 0) return `No ${noun}`;
  const first = (pages.page - 1) * pages.perPage + 1;
  return `${first.toLocaleString('en')}–${(first + shown - 1).toLocaleString('en')} of ${pages.total.toLocaleString('en')} ${noun}`;
}

/** Previous / Next with "1–20 of 250 contacts · page 1 of 13", for a list of usePagedList. */
export function Pager<T>(props: { list: PagedList<T>; noun: string }) {
  const { list } = props;
  return (
    <nav class="pager" aria-label={`Pages of ${props.noun}`}>
      <button type="button" disabled={list.page <= 1} onClick={() => list.setPage(list.page - 1)}>
        Previous
      </button>
      <span data-testid="range">
        {rangeText(list.pages, list.rows?.length ?? 0, props.noun)}
        {list.pages.pages > 1 ? ` · page ${list.pages.page} of ${list.pages.pages}` : ''}
      </span>
      <button type="button" disabled={list.page >= list.pages.pages} onClick={() => list.setPage(list.page + 1)}>
        Next
      </button>
    </nav>
  );
}

/** The error line of a page, announced to screen readers. */
export function ErrorLine(props: { error: string | undefined }) {
  return props.error === undefined ? null : (
    <p class="error" role="alert">
      {props.error}
    </p>
  );
}

/** Runs an API call for a form: busy while it runs, its error line after; `done` on success. */
export async function submit(
  call: () => Promise<{ error?: unknown; response: Response }>,
  setError: (error: string | undefined) => void,
  done: () => void,
): Promise<void> {
  setError(undefined);
  try {
    const { error, response } = await call();
    if (error !== undefined) return setError(errorText(error, response.status));
    done();
  } catch {
    setError('The server could not be reached.');
  }
}
