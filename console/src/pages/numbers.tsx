import { useEffect, useRef, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { QuotaInputs } from './subaccount-fields.tsx';
import { typed } from './subaccount-kit.ts';
import { focusHeading, Notice, useNotice } from './template-kit.tsx';
import { When } from './ui.tsx';

type AccountNumber = components['schemas']['Number'];
type NumberLimits = components['schemas']['NumberLimits'];
type NumberUsage = components['schemas']['NumberUsage'];
/** A number of the list with its limits and today's use (undefined when numbers/usage could not be read). */
type NumberRow = AccountNumber & { usage?: NumberUsage };

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

const PER_PAGE = '20';
const LIMIT_FIELDS = ['MaxPerSecond', 'MaxPerDay', 'MaxRecipientsPerMonth'] as const;

/** What the API's messages on a number's limits mean here (docs/API.md §17, numbers/update). */
const LIMITS_HELP: FieldHelp = {
  MaxPerSecond: {
    'Max Per Second must be an integer.': 'Write a whole number of messages a second, or 0 for no limit.',
    'Max Per Second must be no less than 0.': 'Write 0 (no limit) or more.',
    'Max Per Second must be no greater than 100,000.': 'At most 100,000 messages a second.',
  },
  MaxPerDay: {
    'Max Per Day must be an integer.': 'Write a whole number of messages a day, or 0 for no limit.',
    'Max Per Day must be no less than 0.': 'Write 0 (no limit) or more.',
    'Max Per Day must be no greater than 2,147,483,647.': 'Write a smaller number, or 0 for no limit.',
  },
  MaxRecipientsPerMonth: {
    'Max Recipients Per Month must be an integer.': 'Write a whole number of recipients a month, or 0 for no limit.',
    'Max Recipients Per Month must be no less than 0.': 'Write 0 (no limit) or more.',
    'Max Recipients Per Month must be no greater than 2,147,483,647.': 'Write a smaller number, or 0 for no limit.',
  },
};

const count = (n: number | undefined) => (n ?? 0).toLocaleString('en');

/** A number's limits in words: "No limits", or each one set ("300 a day · 200 recipients a month"). */
export function limitsText(l: Pick<NumberUsage, 'MaxPerSecond' | 'MaxPerDay' | 'MaxRecipientsPerMonth'>): string {
  const parts = [
    (l.MaxPerSecond ?? 0) > 0 ? `${count(l.MaxPerSecond)} a second` : '',
    (l.MaxPerDay ?? 0) > 0 ? `${count(l.MaxPerDay)} a day` : '',
    (l.MaxRecipientsPerMonth ?? 0) > 0 ? `${count(l.MaxRecipientsPerMonth)} recipients a month` : '',
  ].filter((p) => p !== '');
  return parts.length === 0 ? 'No limits' : parts.join(' · ');
}

/** Today's use against the limits: "12 of 300 messages today · 40 of 200 recipients this month". */
function useText(u: NumberUsage): string {
  const of = (limit: number | undefined) => ((limit ?? 0) > 0 ? ` of ${count(limit)}` : '');
  return `${count(u.MessagesToday)}${of(u.MaxPerDay)} messages today · ${count(u.RecipientsThisMonth)}${of(u.MaxRecipientsPerMonth)} recipients this month`;
}

/**
 * The account's numbers (numbers/index, paged in the URL; docs/API.md §9.2): each number with
 * every field of its record (`Number`, `Status_Id`, `Status_Description` as the API writes it,
 * `Blocked_Date`) and its status in words, and (numbers/usage, docs/API.md §17) its limits and
 * what it sent today and to how many recipients this month. With `numbers:write`, a number's three
 * limits are edited (read fresh with numbers/view, saved with numbers/update, the fields changed
 * only). Numbers are added and their status changed by the service's operator.
 */
export function Numbers(props: { api: Api }) {
  const { api } = props;
  const writable = api.can('numbers:write');
  const [editing, setEditing] = useState<string | undefined>();
  const { notice, say } = useNotice();
  const list = usePagedList<NumberRow>(
    async (page) => {
      const query = { page: String(page), 'per-page': PER_PAGE };
      const answer = await api.GET('/v1/numbers/index', { params: { query } });
      if (answer.data === undefined) return answer;
      // The same page of numbers/usage (the same order and paging): joined by number.
      const usage = await api.GET('/v1/numbers/usage', { params: { query } }).catch(() => undefined);
      const byNumber = new Map((usage?.data ?? []).map((u) => [u.Number, u]));
      return { ...answer, data: answer.data.map((n) => ({ ...n, usage: byNumber.get(n.Number ?? '') })) };
    },
    [api],
  );
  return (
    <>
      <h1>Numbers</h1>
      <p class="hint">
        The short codes and long numbers the account sends from and receives on. Only an Active number sends; the service's operator adds
        numbers and changes their status. A number's limits are the caps its carrier puts on it: messages a second, a day, and distinct
        recipients a month.
      </p>
      <Notice notice={notice} />
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
                <th scope="col">Limits</th>
                <th scope="col">Use</th>
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
                  <td data-label="Limits">
                    <span data-testid="limits">{n.usage === undefined ? '—' : limitsText(n.usage)}</span>
                    {writable && (
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Edit the limits of ${numberText(n.Number)}`}
                        aria-expanded={editing === n.Number}
                        onClick={() => setEditing(n.Number)}
                      >
                        Edit limits
                      </button>
                    )}
                  </td>
                  <td data-label="Use" data-testid="use">
                    {n.usage === undefined ? '—' : useText(n.usage)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} noun="numbers" />
      {editing !== undefined && (
        <LimitsForm
          key={editing}
          api={api}
          number={editing}
          onSaved={(saved) => {
            setEditing(undefined);
            say(`Limits of ${numberText(saved.Number)} saved: ${limitsText(saved)}.`);
            list.reload();
          }}
          onCancel={() => {
            setEditing(undefined);
            say(undefined);
            focusHeading();
          }}
        />
      )}
    </>
  );
}

/**
 * A number's three limits (docs/API.md §17): read fresh (numbers/view), edited, saved
 * (numbers/update with the fields changed only; an emptied one is 0, no limit). The API's messages
 * go next to the field they name.
 */
function LimitsForm(props: { api: Api; number: string; onSaved: (saved: NumberLimits) => void; onCancel: () => void }) {
  const { api, number } = props;
  const text = numberText(number);
  const [current, setCurrent] = useState<NumberLimits | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [perSecond, setPerSecond] = useState('');
  const [perDay, setPerDay] = useState('');
  const [perMonth, setPerMonth] = useState('');
  const form = useFormErrors(LIMIT_FIELDS, LIMITS_HELP);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    let live = true;
    api
      .GET('/v1/numbers/view', { params: { query: { number } } })
      .then(({ data, error, response }) => {
        if (!live) return;
        if (error !== undefined || data === undefined) return setLoadError(errorText(error, response.status));
        setCurrent(data);
        setPerSecond(String(data.MaxPerSecond ?? 0));
        setPerDay(String(data.MaxPerDay ?? 0));
        setPerMonth(String(data.MaxRecipientsPerMonth ?? 0));
        heading.current?.focus();
      })
      .catch(() => live && setLoadError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [api, number]);
  return (
    <form
      class="compose card"
      aria-labelledby="limits-heading"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (current === undefined) return;
        const body: Record<string, string> = {};
        const fields: [(typeof LIMIT_FIELDS)[number], string, number | undefined][] = [
          ['MaxPerSecond', perSecond, current.MaxPerSecond],
          ['MaxPerDay', perDay, current.MaxPerDay],
          ['MaxRecipientsPerMonth', perMonth, current.MaxRecipientsPerMonth],
        ];
        // An emptied limit is none: 0.
        for (const [field, value, was] of fields) if ((typed(value) ?? '0') !== String(was ?? 0)) body[field] = typed(value) ?? '0';
        if (Object.keys(body).length === 0) return form.setGeneral('Nothing to save: no limit was changed.');
        void submitForm(
          () => api.call<NumberLimits>('PUT', '/v1/numbers/update', { query: { number }, body }),
          form,
          (data) => data !== undefined && props.onSaved(data),
        );
      }}
    >
      <h2 id="limits-heading" ref={heading} tabIndex={-1}>
        Limits of {text}
      </h2>
      <p class="hint" id="limits-hint">
        0 (or empty) is no limit. A limit set where there was none counts what the number already sent today, or the recipients it had this
        month.
      </p>
      {current === undefined ? (
        loadError === undefined ? (
          <p role="status">Loading…</p>
        ) : (
          <ErrorLine error={loadError} />
        )
      ) : (
        <>
          <div class="form-grid">
            <QuotaInputs
              form={form}
              prefix="limits"
              perSecond={perSecond}
              setPerSecond={setPerSecond}
              perDay={perDay}
              setPerDay={setPerDay}
              perMonth={perMonth}
              setPerMonth={setPerMonth}
              hintId="limits-hint"
            />
          </div>
          <GeneralError form={form} />
        </>
      )}
      <div class="actions">
        <button type="submit" disabled={current === undefined}>
          Save limits
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
