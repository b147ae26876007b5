/**
 * Sub-accounts (docs/API.md §16.1, `/v1/subaccounts/…`, scope `subaccounts`): the accounts this
 * account gives credits, numbers, keys and people to. `#/subaccounts` lists them (subaccounts/index,
 * paged in the URL's `page`) with a form to create one (subaccounts/create: Name, Credits moved from
 * this account, MaxPerSecond, MaxPerDay) and their usage over a range of days (subaccounts/usage,
 * the days in the URL's `from` and `to`, paged in `usagePage`); `#/subaccounts/<id>` is one of them
 * (subaccount-view.tsx). A sub-account's own credentials never reach these operations, whatever
 * their scopes: `useSubaccountsShown` asks the server once per session, and the navigation shows the
 * page only when it answers.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { go, placeHref, usePlace, useUrlFilters } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors } from './fields.tsx';
import { QuotaInputs } from './subaccount-fields.tsx';
import { lastDays } from './overview.tsx';
import { useDraft, When } from './ui.tsx';
import { Notice, useNotice, type NoticeState } from './template-kit.tsx';
import { SubaccountView } from './subaccount-view.tsx';
import { quotaText, SUBACCOUNT_HELP, typed, useBalance, type Subaccount } from './subaccount-kit.ts';

type Usage = components['schemas']['Usage'];

/**
 * The status line of a page that is a list and its records (`#/<route>`, `#/<route>/<id>`): kept
 * above both, so that `open(id, text)` shows a create's line on the new record's page; any other
 * move between them leaves the last line behind.
 */
export function useCarriedNotice(route: string) {
  const place = usePlace();
  const { notice, say } = useNotice();
  const carry = useRef(false);
  useEffect(() => {
    if (carry.current) carry.current = false;
    else if (notice.text !== undefined) say(undefined);
  }, [place.id]);
  const open = (id: number | undefined, text: string) => {
    say(text);
    carry.current = true;
    go(placeHref(route, id));
  };
  return { place, notice, say, open };
}

/** The page: the list (with the create form and the usage), or one sub-account when the URL names it. */
export function Subaccounts(props: { api: Api }) {
  const { place, notice, say, open } = useCarriedNotice('subaccounts');
  if (place.id !== undefined) return <SubaccountView api={props.api} id={place.id} notice={notice} say={say} />;
  return <SubaccountList api={props.api} notice={notice} open={open} />;
}

function SubaccountList(props: { api: Api; notice: NoticeState; open: (id: number | undefined, text: string) => void }) {
  const { api } = props;
  const writable = api.can('subaccounts:write');
  const [tick, setTick] = useState(0);
  const balance = useBalance(api, tick);
  const list = usePagedList<Subaccount>(
    (page) => api.GET('/v1/subaccounts/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [api],
  );
  const refused = list.error === 'You are not allowed to perform this action.';
  return (
    <>
      <h1>Sub-accounts</h1>
      <p class="hint">
        Accounts of your own customers: each has its own balance, numbers, keys and people, and its own quotas. Credits move between this
        account and a sub-account in both directions.
      </p>
      {balance !== undefined && (
        <p data-testid="own-balance">
          This account has <strong>{balance}</strong> credits.
        </p>
      )}
      <Notice notice={props.notice} />
      {refused ? (
        <p class="error" role="alert">
          {api.can('subaccounts:read')
            ? 'This account is a sub-account: it has none of its own, and its keys and people never reach sub-accounts.'
            : 'Your credential lacks the scope subaccounts:read.'}{' '}
          (The API said: You are not allowed to perform this action.)
        </p>
      ) : (
        <>
          {writable && (
            <CreateSubaccount
              api={api}
              balance={balance}
              onCreated={(created, credits) => {
                setTick((n) => n + 1);
                props.open(
                  created.Id,
                  `Sub-account “${created.Name ?? ''}” is created${credits > 0 ? `, with ${credits} credits moved from this account` : ''}.`,
                );
              }}
            />
          )}
          <h2>Your sub-accounts</h2>
          <ErrorLine error={list.error} />
          {list.rows === undefined ? (
            list.error === undefined && <p role="status">Loading…</p>
          ) : list.rows.length === 0 ? (
            <p>No sub-accounts yet.</p>
          ) : (
            <div class="table-box">
              <table>
                <caption class="visually-hidden">Sub-accounts, by Id</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Status</th>
                    <th scope="col">Credits</th>
                    <th scope="col">Max per second</th>
                    <th scope="col">Max per day</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {list.rows.map((s) => (
                    <tr key={s.Id} data-testid="subaccount" data-id={s.Id} data-status={s.Status}>
                      <td class="text" data-label="Name">
                        <a href={placeHref('subaccounts', s.Id)}>{s.Name}</a>
                      </td>
                      <td data-label="Status" data-testid="subaccount-status">
                        {s.Status}
                      </td>
                      <td data-label="Credits" data-testid="subaccount-credits">
                        {s.AvailableCredits}
                      </td>
                      <td data-label="Max per second">{quotaText(s.MaxPerSecond, 'a second')}</td>
                      <td data-label="Max per day">{quotaText(s.MaxPerDay, 'a day')}</td>
                      <td class="nowrap" data-label="Created">
                        <When value={s.DateCreated} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager list={list} noun="sub-accounts" />
          {list.rows !== undefined && <UsageSection api={api} />}
        </>
      )}
    </>
  );
}

const CREATE_FIELDS = ['Name', 'Credits', 'MaxPerSecond', 'MaxPerDay'];

/** Creates a sub-account (subaccounts/create); its credits come from this account in the same transaction. */
function CreateSubaccount(props: { api: Api; balance: number | undefined; onCreated: (created: Subaccount, credits: number) => void }) {
  const [name, setName] = useState('');
  const [credits, setCredits] = useState('');
  const [perSecond, setPerSecond] = useState('');
  const [perDay, setPerDay] = useState('');
  const form = useFormErrors(CREATE_FIELDS, SUBACCOUNT_HELP);
  const field = (api: string, id: string) => form.aria(api, id);
  return (
    <form
      class="compose card"
      aria-label="Create a sub-account"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const body: Record<string, string> = { Name: name };
        for (const [key, value] of [
          ['Credits', credits],
          ['MaxPerSecond', perSecond],
          ['MaxPerDay', perDay],
        ] as const) {
          const v = typed(value);
          if (v !== undefined) body[key] = v;
        }
        void submitForm(
          () => props.api.call<Subaccount>('POST', '/v1/subaccounts/create', { body }),
          form,
          (data) => {
            if (data === undefined) return;
            setName('');
            setCredits('');
            setPerSecond('');
            setPerDay('');
            props.onCreated(data, Number(body.Credits ?? '0'));
          },
        );
      }}
    >
      <h2>Create a sub-account</h2>
      <div class="form-grid">
        <div class="wide">
          <label for="sub-name">Name</label>
          <input
            id="sub-name"
            maxLength={255}
            autoComplete="off"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            {...field('Name', 'sub-name')}
          />
          <FieldMessage form={form} field="Name" id="sub-name" />
        </div>
        <div>
          <label for="sub-credits">Credits moved from this account</label>
          <input
            id="sub-credits"
            inputMode="numeric"
            autoComplete="off"
            value={credits}
            onInput={(e) => setCredits(e.currentTarget.value)}
            aria-describedby={form.of('Credits') ? 'sub-credits-error' : 'sub-credits-hint'}
            aria-invalid={form.of('Credits') ? 'true' : undefined}
          />
          <p class="hint" id="sub-credits-hint">
            {props.balance === undefined ? 'Empty: none.' : `Empty: none. This account has ${props.balance}.`}
          </p>
          <FieldMessage form={form} field="Credits" id="sub-credits" />
        </div>
        <QuotaInputs
          form={form}
          prefix="sub"
          perSecond={perSecond}
          setPerSecond={setPerSecond}
          perDay={perDay}
          setPerDay={setPerDay}
          hintId="sub-quota-hint"
        />
        <p class="hint wide" id="sub-quota-hint">
          Quotas: empty or 0 is no limit of its own (this service's limits still apply). Per second caps how fast its messages go to the
          carriers; per day, how many it may queue in a day of the service's time zone.
        </p>
      </div>
      <GeneralError form={form} />
      <button type="submit">Create sub-account</button>
    </form>
  );
}

const USAGE_FILTERS = ['from', 'to'] as const;

/**
 * Usage per sub-account (subaccounts/usage) over whole days in the service's time zone, by default
 * the last 7 (today and the 6 before it): its outbound messages created then, counted by their
 * status now, and the credits they cost less refunds. The days are in the URL (`from`, `to`), the
 * page in `usagePage`. With `operator`, the operator's Usage page (docs/API.md §16.4, admin
 * usage): every account's, under the page's own heading.
 */
export function UsageSection(props: { api: Api; operator?: boolean }) {
  const { api, operator = false } = props;
  const defaults = lastDays(api.session.TimeZone, 7);
  const { applied, apply } = useUrlFilters(USAGE_FILTERS, 'usagePage');
  const from = applied.from || defaults.from.slice(0, 10);
  const to = applied.to || defaults.to.slice(0, 10);
  const [draft, setDraft] = useDraft({ from, to }, `${from}\n${to}`);
  const list = usePagedList<Usage>(
    (page) => {
      const query = { from: `${from} 00:00:00`, to: `${to} 23:59:59`, page: String(page), 'per-page': '20' };
      return operator ? api.admin<Usage[]>('GET', '/admin/v1/usage', { query }) : api.GET('/v1/subaccounts/usage', { params: { query } });
    },
    [api, from, to],
    { param: 'usagePage' },
  );
  const Heading = operator ? 'h1' : 'h2';
  const noun = operator ? 'account' : 'sub-account';
  const route = operator ? 'operator-accounts' : 'subaccounts';
  return (
    <section aria-labelledby="usage-title">
      <Heading id="usage-title">Usage</Heading>
      <p class="hint">
        Each {noun}'s outbound messages created from the first day's midnight to the last day's end (the service's time zone), counted by
        their status now, and the credits they cost less what was refunded.
      </p>
      <form
        class="filters"
        aria-label="Usage days"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <label>
          From day
          <input type="date" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} />
        </label>
        <label>
          To day
          <input type="date" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} />
        </label>
        <button type="submit">Show usage</button>
      </form>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        list.error === undefined && <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No {noun}s.</p>
      ) : (
        <div class="table-box">
          <table data-testid="usage">
            <caption class="visually-hidden">
              Usage from {from} to {to}
            </caption>
            <thead>
              <tr>
                <th scope="col">{operator ? 'Account' : 'Sub-account'}</th>
                <th scope="col">Outbound</th>
                <th scope="col">Delivered</th>
                <th scope="col">Failed</th>
                <th scope="col">Credits</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((u) => (
                <tr key={u.Id} data-testid="usage-row" data-id={u.Id}>
                  <td class="text" data-label={operator ? 'Account' : 'Sub-account'}>
                    <a href={placeHref(route, u.Id)}>{u.Name}</a>
                  </td>
                  <td data-label="Outbound" data-testid="usage-outbound">
                    {u.Outbound}
                  </td>
                  <td data-label="Delivered" data-testid="usage-delivered">
                    {u.Delivered}
                  </td>
                  <td data-label="Failed" data-testid="usage-failed">
                    {u.Failed}
                  </td>
                  <td data-label="Credits" data-testid="usage-credits">
                    {u.Credits}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} noun="usage rows" />
    </section>
  );
}
