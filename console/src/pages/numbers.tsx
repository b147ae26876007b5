import type { components } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { When } from './ui.tsx';

type AccountNumber = components['schemas']['Number'];

/** Each number status in words: what it lets the account do (docs/API.md §9.2, §10.5, §11.7). */
export const STATUS_WORDS: Record<number, string> = {
  0: 'Active: messages can be sent from it and keywords reserved on it.',
  1: 'Inactive: nothing is sent from it; messages from it are rejected and scheduled ones need action.',
  301: 'Temporarily blocked: the carrier has paused it; nothing is sent from it until it is unblocked.',
  302: 'Permanently blocked: the carrier blocked it for good; nothing can be sent from it again.',
};

/** A number as people read it: a short code as it is (`55155`), a long number with `+`. */
export function numberText(n: string | undefined): string {
  if (n === undefined) return '';
  return n.length <= 6 ? n : `+${n}`;
}

/**
 * The account's numbers (numbers/index, paged in the URL; docs/API.md §9.2): each number with
 * every field of its record (`Number`, `Status_Id`, `Status_Description` as the API writes it,
 * `Blocked_Date`) and its status in words. Numbers are added and changed by the service's
 * operator: the API only lists them.
 */
export function Numbers(props: { api: Api }) {
  const list = usePagedList<AccountNumber>(
    (page) => props.api.GET('/v1/numbers/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [props.api],
  );
  return (
    <>
      <h1>Numbers</h1>
      <p class="hint">
        The short codes and long numbers the account sends from and receives on. Only an Active number sends; the service's operator adds
        numbers and changes their status.
      </p>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>The account has no numbers yet: ask the service's operator for one.</p>
      ) : (
        <div class="table-box">
          <table>
            <caption class="visually-hidden">The account's numbers</caption>
            <thead>
              <tr>
                <th scope="col">Number</th>
                <th scope="col">Status</th>
                <th scope="col">Status_Id</th>
                <th scope="col">Status_Description</th>
                <th scope="col">Blocked since</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((n) => (
                <tr key={n.Number} data-testid="number" data-number={n.Number} data-status={n.Status_Id}>
                  <td data-label="Number" class="nowrap">
                    <strong>{numberText(n.Number)}</strong>
                  </td>
                  <td data-label="Status" data-testid="status-words">
                    {STATUS_WORDS[n.Status_Id ?? -1] ?? `Status ${n.Status_Id ?? ''}`}
                  </td>
                  <td data-label="Status_Id" data-testid="status-id">
                    {n.Status_Id}
                  </td>
                  <td data-label="Status_Description" data-testid="status-description">
                    {n.Status_Description}
                  </td>
                  <td data-label="Blocked since" data-testid="blocked">
                    {n.Blocked_Date === null || n.Blocked_Date === undefined ? 'Not blocked' : <When value={n.Blocked_Date} />}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} noun="numbers" />
    </>
  );
}
