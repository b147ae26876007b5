import { useEffect, useId, useState } from 'preact/hooks';
import { errorText, pagination, type Pagination } from '../api.ts';
import type { PageAnswer } from './list.tsx';
import { rangeText } from './list.tsx';

/** How long typing must pause before the picker asks the server (ms). */
const DEBOUNCE_MS = 250;

/**
 * A picker that searches on the server (a list operation's `Search` filter, docs/API.md): a search
 * box and the first page of what matches, as a list box, with "1–20 of 250 contacts" so that a
 * long list never ends silently at its first page. Typing narrows it; the choice is the option's
 * value (a record id, or a number).
 */
export function SearchPicker<T>(props: {
  /** The label of the choice, e.g. "Contact". */
  label: string;
  /** The plural noun of the list, e.g. "contacts". */
  noun: string;
  /** First page of the records matching `text` ("" for all). */
  search: (text: string) => Promise<PageAnswer<T>>;
  option: (row: T) => { value: string; label: string };
  value: string;
  onChange: (value: string, row: T | undefined) => void;
  /** The id of the list box (for a label elsewhere, and for tests). */
  id?: string;
}) {
  const auto = useId();
  const id = props.id ?? auto;
  const [text, setText] = useState('');
  const [rows, setRows] = useState<T[] | undefined>();
  const [pages, setPages] = useState<Pagination>({ page: 1, pages: 0, total: 0, perPage: 0 });
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      props
        .search(text.trim())
        .then(({ data, error, response }) => {
          if (!live) return;
          if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
          setError(undefined);
          setRows(data);
          setPages(pagination(response));
        })
        .catch(() => live && setError('The server could not be reached.'));
    }, DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [text]);
  const options = (rows ?? []).map((row) => ({ row, ...props.option(row) }));
  return (
    <div class="picker">
      <label for={`${id}-search`}>Search {props.noun}</label>
      <input id={`${id}-search`} type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} autoComplete="off" />
      <label for={id}>{props.label}</label>
      <select
        id={id}
        size={Math.min(6, Math.max(2, options.length + 1))}
        value={props.value}
        onChange={(e) => {
          const value = e.currentTarget.value;
          props.onChange(value, options.find((o) => o.value === value)?.row);
        }}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <p class="hint picker-results" role="status" data-testid={`${id}-range`}>
        {error ??
          (rows === undefined
            ? 'Searching…'
            : `${rangeText(pages, options.length, props.noun)}${pages.total > options.length ? ': type to narrow the list.' : ''}`)}
      </p>
    </div>
  );
}
