import type { Api, AuditEntry } from '../api.ts';
import { placeHref, useUrlFilters } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { serviceDateTime, useDraft, When } from './ui.tsx';

/** The filters, as the URL keeps them (`from` and `to` as the datetime-local inputs write them); the operator's add AccountId. */
const FILTERS = ['Actor', 'Operation', 'from', 'to'] as const;
const OPERATOR_FILTERS = [...FILTERS, 'AccountId'] as const;
type Filters = Record<(typeof OPERATOR_FILTERS)[number], string>;

/** An entry of every account's audit log (the operator's audit/index, docs/API.md §16.4). */
type Entry = AuditEntry & { AccountId?: number };

/**
 * The audit log (docs/API.md §15, audit/index, newest first, paged): who did what, from where, and
 * what the server answered, filtered by actor (`key:3:ci`, `user:2:ann@example.com`), operation
 * (`groups.delete`, `session.create`) and a time range in the service's time zone. The filters and
 * the page are in the URL (`#/audit?Operation=keys.create&page=2`): Back, a reload and a shared link
 * keep them.
 *
 * With `operator`, the operator's page (docs/API.md §16.4, admin audit/index): every account's log,
 * each entry with its account, filtered by `AccountId` too (`#/operator-audit?AccountId=5`).
 */
export function Audit(props: { api: Api; operator?: boolean }) {
  const { api, operator = false } = props;
  const keys = operator ? OPERATOR_FILTERS : FILTERS;
  const { applied, apply } = useUrlFilters<keyof Filters>(keys);
  // An account's own log has no AccountId filter.
  const filters: Filters = operator ? applied : { ...applied, AccountId: '' };
  // Back, or a link, changes the URL's filters: the form shows them.
  const key = keys.map((k) => filters[k]).join('\n');
  const [draft, setDraft] = useDraft<Filters>(filters, key);
  const list = usePagedList<Entry>(
    (page) => {
      const query: Record<string, string> = { page: String(page), 'per-page': '50' };
      if (filters.Actor.trim() !== '') query.Actor = filters.Actor.trim();
      if (filters.Operation.trim() !== '') query.Operation = filters.Operation.trim();
      if (filters.from !== '') query.from = serviceDateTime(filters.from);
      if (filters.to !== '') query.to = serviceDateTime(filters.to);
      if (filters.AccountId.trim() !== '') query.AccountId = filters.AccountId.trim();
      return operator
        ? api.admin<Entry[]>('GET', '/admin/v1/audit/index', { query })
        : api.call<Entry[]>('GET', '/v1/audit/index', { query });
    },
    [api, key],
  );
  const field = (name: keyof Filters) => ({
    value: draft[name],
    onInput: (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [name]: e.currentTarget.value }),
  });

  return (
    <>
      <h1>Audit log</h1>
      <p class="hint">
        {operator
          ? "Every account's log: each change made with a key, by a person or by the operator, every sign-in and sign-out, newest first."
          : 'Every change made with a key or by a person, every sign-in and sign-out, newest first.'}{' '}
        Times are in the service's time zone.
      </p>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <label>
          Actor
          <input placeholder="user:2:ann@example.com" spellcheck={false} {...field('Actor')} />
        </label>
        <label>
          Operation
          <input placeholder="keys.create" spellcheck={false} {...field('Operation')} />
        </label>
        <label>
          From
          <input type="datetime-local" step={1} {...field('from')} />
        </label>
        <label>
          To
          <input type="datetime-local" step={1} {...field('to')} />
        </label>
        {operator && (
          <label>
            Account Id
            <input inputMode="numeric" autoComplete="off" {...field('AccountId')} />
          </label>
        )}
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
            <caption class="visually-hidden">Audit entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                {operator && <th scope="col">Account</th>}
                <th scope="col">Actor</th>
                <th scope="col">Operation</th>
                <th scope="col">Object</th>
                <th scope="col">Status</th>
                <th scope="col">Address</th>
                <th scope="col">Request</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((a) => (
                <tr key={a.Id} data-testid="audit-entry">
                  <td class="nowrap" data-label="Time">
                    <When value={a.DateCreated} />
                  </td>
                  {operator && (
                    <td data-label="Account" data-testid="audit-account">
                      <a href={placeHref('operator-accounts', a.AccountId)} aria-label={`Account ${a.AccountId ?? ''}`}>
                        {a.AccountId}
                      </a>
                    </td>
                  )}
                  <td class="text" data-label="Actor">
                    {a.Actor}
                  </td>
                  <td data-label="Operation">
                    <code>{a.Operation}</code>
                  </td>
                  <td data-label="Object">{a.ObjectId || '–'}</td>
                  <td data-label="Status">{a.Status}</td>
                  <td data-label="Address">{a.Ip}</td>
                  <td data-label="Request">
                    <code class="text">{a.RequestId}</code>
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
