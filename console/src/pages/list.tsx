import { useEffect, useState } from 'preact/hooks';
import { errorText, pagination } from '../api.ts';

/** One page of a list operation as the typed client answers it. */
export interface PageAnswer<T> {
  data?: T[];
  error?: unknown;
  response: Response;
}

/** A list page's state: its rows (undefined while loading), its pagination, an error line. */
export interface PagedList<T> {
  rows: T[] | undefined;
  pages: { page: number; pages: number; total: number };
  error: string | undefined;
  page: number;
  setPage: (page: number) => void;
  /** Loads the current page again (after an edit). */
  reload: () => void;
}

/**
 * Loads page `page` of a list operation (docs/API.md §5: `page`, `per-page` and the
 * X-Pagination-* headers) with `load`, again whenever `deps` change or `reload()` is called.
 */
export function usePagedList<T>(load: (page: number) => Promise<PageAnswer<T>>, deps: readonly unknown[]): PagedList<T> {
  const [page, setPage] = useState(1);
  const [tick, setTick] = useState(0);
  const [rows, setRows] = useState<T[] | undefined>();
  const [pages, setPages] = useState({ page: 1, pages: 0, total: 0 });
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    load(page)
      .then(({ data, error, response }) => {
        if (!live) return;
        if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
        setError(undefined);
        setRows(data);
        setPages(pagination(response));
      })
      .catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [page, tick, ...deps]);
  return { rows, pages, error, page, setPage, reload: () => setTick((n) => n + 1) };
}

/** Previous / Next with "Page n of m (total noun)", for a list of usePagedList. */
export function Pager<T>(props: { list: PagedList<T>; noun: string }) {
  const { list } = props;
  return (
    <nav class="pager" aria-label={`Pages of ${props.noun}`}>
      <button type="button" disabled={list.page <= 1} onClick={() => list.setPage(list.page - 1)}>
        Previous
      </button>
      <span>
        Page {list.pages.page} of {Math.max(1, list.pages.pages)} ({list.pages.total} {props.noun})
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
