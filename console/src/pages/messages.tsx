import { useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { ErrorCodeText } from '../error-codes.tsx';
import { placeHref, useUrlFilters } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { useDraft, When } from './ui.tsx';

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

const FILTER_KEYS = ['Direction', 'Status_Id', 'MobilePhone', 'BatchId'] as const;
type FilterKey = (typeof FILTER_KEYS)[number];
const PER_PAGE = '20';

/**
 * The message log (sms/index, newest first) with the operation's filters and its pagination, both
 * in the URL (Back, a reload and a shared link keep them); asked again every 5 seconds so statuses
 * move without a reload. Each message's ErrorCode is explained (GET /v1/errors). Export downloads
 * the log with the same filters, and an optional range of days, as CSV (sms/export).
 */
export function Messages(props: { api: Api }) {
  const { api } = props;
  const filters = useUrlFilters(FILTER_KEYS);
  const applied = filters.applied;
  const appliedKey = FILTER_KEYS.map((k) => applied[k]).join('\u0000');
  // Back, or a link to filtered messages, changes the URL: the form follows it.
  const [draft, setDraft] = useDraft<Record<FilterKey, string>>(applied, appliedKey);
  const list = usePagedList<Message>(
    (page) => {
      const query: Record<string, string> = { page: String(page), 'per-page': PER_PAGE };
      for (const key of FILTER_KEYS) if (applied[key] !== '') query[key] = applied[key];
      return api.GET('/v1/sms/index', { params: { query } });
    },
    [api, appliedKey],
    { refreshMs: 5000 },
  );

  const field = (key: FilterKey) => ({
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
          filters.apply(draft);
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
      <ExportLink applied={applied} />
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
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
              {list.rows.map((m) => (
                <tr key={m.Id}>
                  <td data-label="Id">
                    <a href={placeHref('messages', m.Id)}>{m.Id}</a>
                  </td>
                  <td data-label="Created">
                    <When value={m.DateCreated} />
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
                    {m.ErrorCode ? (
                      <>
                        <br />
                        <ErrorCodeText api={api} code={m.ErrorCode} />
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} noun="messages" />
    </>
  );
}

/**
 * Export: a link to sms/export with the log's filters as applied and an optional range of days
 * (whole days in the service's time zone). The session's cookie authenticates the GET, so the
 * browser downloads it as it streams, whatever its size.
 */
function ExportLink(props: { applied: Record<FilterKey, string> }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const query = new URLSearchParams();
  for (const key of FILTER_KEYS) if (props.applied[key] !== '') query.set(key, props.applied[key]);
  if (from !== '') query.set('from', `${from} 00:00:00`);
  if (to !== '') query.set('to', `${to} 23:59:59`);
  const search = query.toString();
  return (
    <section class="export card" aria-labelledby="export-title">
      <h2 id="export-title">Export as CSV</h2>
      <p class="hint">The messages of the filters above, every page; optionally only those created from one day to another.</p>
      <div class="export-row">
        <label>
          From day
          <input type="date" value={from} max={to || undefined} onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To day
          <input type="date" value={to} min={from || undefined} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <a class="button" href={`/v1/sms/export${search === '' ? '' : `?${search}`}`} download="messages.csv" data-testid="export">
          Export CSV
        </a>
      </div>
    </section>
  );
}
