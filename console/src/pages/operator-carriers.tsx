/**
 * The carriers, for the operator (`#/operator-carriers`, docs/API.md §16.4, admin carriers/index):
 * each configured carrier with its type, its state as the answering process's dispatcher sees it,
 * the submits awaiting an answer there, and the last hour's traffic counted in the database (every
 * instance agrees on those). Read again every 10 seconds while the page is open.
 */
import type { Api } from '../api.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import type { Carrier } from './operator-kit.ts';

/** Each state in words. */
const STATE_WORDS: Record<string, string> = {
  ready: 'Ready: it takes messages.',
  down: 'Down: it takes none now (its link is down); messages wait for it.',
  unknown: 'Unknown: no dispatcher runs in the process that answered (it runs in a separate worker).',
};

/** How often the page reads the carriers again, in ms. */
const REFRESH_MS = 10_000;

export function OperatorCarriers(props: { api: Api }) {
  const list = usePagedList<Carrier>(
    (page) => props.api.admin<Carrier[]>('GET', '/admin/v1/carriers/index', { query: { page: String(page), 'per-page': '20' } }),
    [props.api],
    { refreshMs: REFRESH_MS },
  );
  return (
    <>
      <h1>Carriers</h1>
      <p class="hint">
        The carriers messages go out through, in the order they are configured. Submitted and Failed count the last hour: the messages a
        carrier accepted, and of those how many then ended Undelivered or Failed. Read again every 10 seconds.
      </p>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        list.error === undefined && <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No carrier is configured.</p>
      ) : (
        <div class="table-box">
          <table>
            <caption class="visually-hidden">Carriers, their state and the last hour</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">State</th>
                <th scope="col">In flight</th>
                <th scope="col">Submitted (last hour)</th>
                <th scope="col">Failed (last hour)</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((c) => (
                <tr key={c.Name} data-testid="carrier" data-name={c.Name} data-state={c.State}>
                  <td class="text" data-label="Name">
                    <strong>{c.Name}</strong>
                  </td>
                  <td data-label="Type">{c.Type}</td>
                  <td data-label="State" data-testid="carrier-state">
                    {STATE_WORDS[c.State] ?? c.State}
                  </td>
                  <td data-label="In flight" data-testid="carrier-in-flight">
                    {c.InFlight ?? '–'}
                  </td>
                  <td data-label="Submitted (last hour)" data-testid="carrier-submitted">
                    {c.Submitted}
                  </td>
                  <td data-label="Failed (last hour)" data-testid="carrier-failed">
                    {c.Failed}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} noun="carriers" />
    </>
  );
}
