/**
 * Where the console is: everything a person would want back after a reload, a Back or a shared
 * link lives in the URL's fragment, `#/<page>[/<id>][?<params>]`:
 * - `page`: the page (`contacts`, `messages`, …);
 * - `id`: the open record (`#/contacts/12`, `#/messages/40`, `#/conversations/15550000000`);
 * - `params`: the list's page number and its filters (`#/messages?page=3&Status_Id=5`).
 *
 * The fragment never reaches the server, so nothing in it is a secret's hiding place either: the
 * console puts no secret there (an invitation's code is the one exception, by design: it is in the
 * fragment so that no server log sees it).
 */
import { useEffect, useState } from 'preact/hooks';

/** A place in the console. */
export interface Place {
  page: string;
  /** The open record's id (decoded), when the fragment names one. */
  id: string | undefined;
  params: URLSearchParams;
}

/** Reads `#/<page>[/<id>][?<params>]` (the overview when empty). */
export function parsePlace(hash: string = location.hash): Place {
  const raw = hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  const params = new URLSearchParams(q === -1 ? '' : raw.slice(q + 1));
  const slash = path.indexOf('/');
  const page = (slash === -1 ? path : path.slice(0, slash)) || 'overview';
  let id: string | undefined;
  if (slash !== -1 && path.length > slash + 1) {
    try {
      id = decodeURIComponent(path.slice(slash + 1));
    } catch {
      id = path.slice(slash + 1);
    }
  }
  return { page, id, params };
}

/** The fragment of a place: `placeHref('contacts', '12')` is `#/contacts/12`; empty params are left out. */
export function placeHref(page: string, id?: string | number, params?: Record<string, string | undefined> | URLSearchParams): string {
  const search = new URLSearchParams();
  const entries = params instanceof URLSearchParams ? [...params.entries()] : Object.entries(params ?? {});
  for (const [key, value] of entries) if (value !== undefined && value !== '') search.set(key, value);
  const query = search.toString();
  return `#/${page}${id === undefined || id === '' ? '' : `/${encodeURIComponent(String(id))}`}${query === '' ? '' : `?${query}`}`;
}

/** Goes to `href` (a fragment): a new history entry, so Back returns; `replace` changes the current one instead. */
export function go(href: string, replace = false): void {
  if (href === location.hash) return;
  if (replace) {
    history.replaceState(history.state, '', href);
    // replaceState fires no hashchange: tell the listeners ourselves.
    dispatchEvent(new HashChangeEvent('hashchange'));
  } else location.hash = href;
}

/**
 * Changes some of the current place's params (undefined or "" removes one) and keeps the rest;
 * `id` changes the open record too (null closes it).
 */
export function setPlace(patch: Record<string, string | undefined>, options: { id?: string | null; replace?: boolean } = {}): void {
  const now = parsePlace();
  const params = new URLSearchParams(now.params);
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined || value === '') params.delete(key);
    else params.set(key, value);
  }
  const id = options.id === undefined ? now.id : (options.id ?? undefined);
  go(placeHref(now.page, id, params), options.replace);
}

/** The current place, again whenever the fragment changes. */
export function usePlace(): Place {
  const [place, setPlaceState] = useState(parsePlace);
  useEffect(() => {
    const onHash = () => setPlaceState(parsePlace());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  return place;
}

/**
 * A list's filters, kept in the URL: `applied` are the params named by `keys` as the URL has them
 * now; `apply(values)` writes them (and goes back to page 1 of the list, `pageParam`).
 */
export function useUrlFilters<K extends string>(
  keys: readonly K[],
  pageParam = 'page',
): { applied: Record<K, string>; apply: (values: Partial<Record<K, string>>) => void } {
  const place = usePlace();
  const applied = Object.fromEntries(keys.map((k) => [k, place.params.get(k) ?? ''])) as Record<K, string>;
  return {
    applied,
    apply: (values) => {
      const patch: Record<string, string | undefined> = { [pageParam]: undefined };
      for (const k of keys) patch[k] = values[k]?.trim() ?? '';
      setPlace(patch);
    },
  };
}
