import { useEffect, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, pagination } from '../api.ts';

type Message = components['schemas']['Message'];

/** docs/API.md §9.11: the log's statuses. */
export const STATUSES: readonly [string, string][] = [
  ['1', 'Queued'],
  ['2', 'Sent'],
  ['3', 'Delivered'],
  ['4', 'Undelivered'],
  ['5', 'Failed'],
  ['6', 'Rejected'],
  ['7', 'Received'],
];

interface Filters {
  Direction: string;
  Status_Id: string;
  MobilePhone: string;
  BatchId: string;
}

const NO_FILTERS: Filters = { Direction: '', Status_Id: '', MobilePhone: '', BatchId: '' };
const PER_PAGE = '20';
const FILTER_KEYS: readonly (keyof Filters)[] = ['Direction', 'Status_Id', 'MobilePhone', 'BatchId'];

/**
 * The message log (sms/index, newest first) with the operation's filters and its pagination; the
 * page refreshes itself every 5 seconds so statuses move without a reload.
 */
export function Messages(props: { api: MsgsvcClient }) {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [page, setPage] = useState(1);
  const [rows, setRows] = useState<Message[] | undefined>();
  const [pages, setPages] = useState({ page: 1, pages: 0, total: 0 });
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    // Another page or other filters: no stale rows meanwhile.
    setRows(undefined);
    const load = async () => {
      const query: Record<string, string> = { page: String(page), 'per-page': PER_PAGE };
      for (const key of FILTER_KEYS) if (filters[key].trim() !== '') query[key] = filters[key].trim();
      const { data, error, response } = await props.api.GET('/v1/sms/index', { params: { query } });
      if (!live) return;
      if (error !== undefined) return setError(errorText(error, response.status));
      setError(undefined);
      setRows(data);
      setPages(pagination(response));
    };
    const loadSafely = () => load().catch(() => live && setError('The server could not be reached.'));
    void loadSafely();
    const timer = setInterval(() => void loadSafely(), 5000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [props.api, filters, page]);

  const field = (key: keyof Filters) => ({
    value: draft[key],
    onInput: (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [key]: e.currentTarget.value }),
  });

  return (
    <>
      <h1>Messages</h1>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(1);
          setFilters(draft);
        }}
      >
        <label>
          Direction
          <select {...field('Direction')}>
            <option value="">Any</option>
            <option value="Outbound">Outbound</option>
            <option value="Inbound">Inbound</option>
          </select>
        </label>
        <label>
          Status
          <select {...field('Status_Id')}>
            <option value="">Any</option>
            {STATUSES.map(([id, label]) => (
              <option key={id} value={id}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Number
          <input type="tel" {...field('MobilePhone')} />
        </label>
        <label>
          Batch
          <input inputMode="numeric" {...field('BatchId')} />
        </label>
        <button type="submit">Filter</button>
      </form>
      {error !== undefined && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {rows === undefined ? (
        <p role="status">Loading…</p>
      ) : rows.length === 0 ? (
        <p>No messages.</p>
      ) : (
        <div class="table-box">
          <table>
            <caption class="visually-hidden">Messages, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Created</th>
                <th scope="col">Direction</th>
                <th scope="col">Number</th>
                <th scope="col">Message</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((m) => (
                <tr key={m.Id}>
                  <td data-label="Id">
                    <a href={`#/messages/${m.Id}`}>{m.Id}</a>
                  </td>
                  <td class="nowrap" data-label="Created">
                    {m.DateCreated}
                  </td>
                  <td data-label="Direction">{m.Direction}</td>
                  <td class="nowrap" data-label="Number">
                    {m.MobilePhone}
                  </td>
                  <td class="text" data-label="Message">
                    {m.Message}
                  </td>
                  <td data-label="Status" data-status={m.Status_Description}>
                    {m.Status_Description}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages of messages">
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>
          Page {pages.page} of {Math.max(1, pages.pages)} ({pages.total} messages)
        </span>
        <button type="button" disabled={page >= pages.pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </nav>
    </>
  );
}
