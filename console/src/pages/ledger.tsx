import type { Api } from '../api.ts';
import { placeHref, useUrlFilters } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { serviceDateTime, useDraft, When } from './ui.tsx';

/** An entry of the credit ledger (`GET /v1/credits/ledger`, docs/API.md §10.1.1). */
interface LedgerEntry {
  Id: number;
  DateCreated: string;
  Type: string;
  Amount: number;
  Balance: number;
  Reference: string;
  Note: string;
}

/** The ledger's entry types, with what each means here. */
const TYPES: readonly [string, string][] = [
  ['topup', 'Top-up'],
  ['spend', 'Spent'],
  ['refund', 'Refund'],
  ['transfer_in', 'Transfer in'],
  ['transfer_out', 'Transfer out'],
  ['adjustment', 'Adjustment'],
];

const FILTERS = ['Type', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** A Reference as a link where the console has a page for it (`message:12`, `batch:3`), else its text. */
function ReferenceText(props: { value: string }) {
  const [kind, id] = props.value.split(':');
  if (kind === 'message' && id) return <a href={placeHref('messages', id)}>Message {id}</a>;
  if (kind === 'batch' && id) return <a href={placeHref('messages', undefined, { BatchId: id })}>Batch {id}</a>;
  if (kind === 'scheduled' && id) return <span>Scheduled message {id}</span>;
  return <span>{props.value || '—'}</span>;
}

/**
 * The credit ledger (credits/ledger, newest first, paged): every change of the balance with its
 * type, signed amount, the balance after it and what caused it, filtered by type and a time range
 * in the service's time zone; the filters and the page live in the URL.
 */
export function Ledger(props: { api: Api }) {
  const { api } = props;
  const { applied: filters, apply } = useUrlFilters(FILTERS);
  const key = FILTERS.map((k) => filters[k]).join('\n');
  const [draft, setDraft] = useDraft<Filters>(filters, key);
  const list = usePagedList<LedgerEntry>(
    (page) => {
      const query: Record<string, string> = { page: String(page), 'per-page': '50' };
      if (filters.Type !== '') query.Type = filters.Type;
      if (filters.from !== '') query.from = serviceDateTime(filters.from);
      if (filters.to !== '') query.to = serviceDateTime(filters.to);
      return api.call<LedgerEntry[]>('GET', '/v1/credits/ledger', { query });
    },
    [api, key],
  );
  const field = (name: keyof Filters) => ({
    value: draft[name],
    onInput: (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [name]: e.currentTarget.value }),
  });
  return (
    <>
      <h1>Credit ledger</h1>
      <p class="hint">Every change of the balance, newest first: the entries of an account always add up to its balance.</p>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <label>
          Type
          <select {...field('Type')}>
            <option value="">Any</option>
            {TYPES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="datetime-local" step={1} {...field('from')} />
        </label>
        <label>
          To
          <input type="datetime-local" step={1} {...field('to')} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No entries.</p>
      ) : (
        <div class="table-box">
          <table>
            <caption class="visually-hidden">Credit ledger, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Type</th>
                <th scope="col">Amount</th>
                <th scope="col">Balance after</th>
                <th scope="col">Reference</th>
                <th scope="col">Note</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((e) => (
                <tr key={e.Id} data-testid="ledger-entry">
                  <td class="nowrap" data-label="Time">
                    <When value={e.DateCreated} />
                  </td>
                  <td data-label="Type">{TYPES.find(([v]) => v === e.Type)?.[1] ?? e.Type}</td>
                  <td data-label="Amount">{e.Amount > 0 ? `+${e.Amount}` : String(e.Amount)}</td>
                  <td data-label="Balance after">{e.Balance}</td>
                  <td data-label="Reference">
                    <ReferenceText value={e.Reference} />
                  </td>
                  <td class="text" data-label="Note">
                    {e.Note || '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} noun="entries" />
    </>
  );
}
