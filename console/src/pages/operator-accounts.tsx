/**
 * The operator's Accounts (docs/API.md §16.4, `/admin/v1/accounts/…`): `#/operator-accounts` lists
 * every account, sub-accounts and closed ones included (accounts/index, paged in the URL's `page`),
 * with a form to create a top-level account (accounts/create: Name, MaxPerSecond, MaxPerDay; it
 * starts with 0 credits); `#/operator-accounts/<id>` is one of them (operator-account.tsx).
 */
import { useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { placeHref } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { QuotaInputs } from './subaccount-fields.tsx';
import { quotaText, SUBACCOUNT_HELP, typed } from './subaccount-kit.ts';
import { useCarriedNotice } from './subaccounts.tsx';
import { Notice, type NoticeState } from './template-kit.tsx';
import { When } from './ui.tsx';
import type { Account } from './operator-kit.ts';
import { OperatorAccountView } from './operator-account.tsx';

/** The page: the list with the create form, or one account when the URL names it. */
export function OperatorAccounts(props: { api: Api }) {
  const { place, notice, say, open } = useCarriedNotice('operator-accounts');
  if (place.id !== undefined) return <OperatorAccountView api={props.api} id={place.id} notice={notice} say={say} />;
  return <AccountList api={props.api} notice={notice} open={open} />;
}

function AccountList(props: { api: Api; notice: NoticeState; open: (id: number | undefined, text: string) => void }) {
  const { api } = props;
  const list = usePagedList<Account>(
    (page) => api.admin<Account[]>('GET', '/admin/v1/accounts/index', { query: { page: String(page), 'per-page': '20' } }),
    [api],
  );
  return (
    <>
      <h1>Accounts</h1>
      <p class="hint">
        Every account of the service, sub-accounts and closed ones included. Open one to change it, give it credits, a key, its owner or a
        number.
      </p>
      <Notice notice={props.notice} />
      <CreateAccount
        api={api}
        onCreated={(created) => props.open(created.Id, `Account “${created.Name ?? ''}” is created, with 0 credits.`)}
      />
      <h2>All accounts</h2>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        list.error === undefined && <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No accounts yet.</p>
      ) : (
        <div class="table-box">
          <table>
            <caption class="visually-hidden">Accounts, by Id</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
                <th scope="col">Parent</th>
                <th scope="col">Status</th>
                <th scope="col">Credits</th>
                <th scope="col">Max per second</th>
                <th scope="col">Max per day</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((a) => (
                <tr key={a.Id} data-testid="account" data-id={a.Id} data-status={a.Status}>
                  <td data-label="Id">{a.Id}</td>
                  <td class="text" data-label="Name">
                    <a href={placeHref('operator-accounts', a.Id)}>{a.Name}</a>
                  </td>
                  <td data-label="Parent">
                    {a.ParentId === null || a.ParentId === undefined ? (
                      'None'
                    ) : (
                      <a href={placeHref('operator-accounts', a.ParentId)} aria-label={`Parent account ${a.ParentId}`}>
                        {a.ParentId}
                      </a>
                    )}
                  </td>
                  <td data-label="Status" data-testid="account-status">
                    {a.Status}
                  </td>
                  <td data-label="Credits" data-testid="account-credits">
                    {a.AvailableCredits}
                  </td>
                  <td data-label="Max per second">{quotaText(a.MaxPerSecond, 'a second')}</td>
                  <td data-label="Max per day">{quotaText(a.MaxPerDay, 'a day')}</td>
                  <td class="nowrap" data-label="Created">
                    <When value={a.DateCreated} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} noun="accounts" />
    </>
  );
}

/** The API's messages on an account's fields, in the operator's terms (a sub-account's, but for the Name). */
const ACCOUNT_HELP: FieldHelp = {
  ...SUBACCOUNT_HELP,
  Name: {
    'Name cannot be blank.': 'Give the account a name, e.g. the customer it is for.',
    'Name should contain at most 255 characters.': 'A name has 1 to 255 characters.',
  },
};

/** Creates a top-level account (accounts/create) with its quotas; it starts with no credits. */
function CreateAccount(props: { api: Api; onCreated: (created: Account) => void }) {
  const [name, setName] = useState('');
  const [perSecond, setPerSecond] = useState('');
  const [perDay, setPerDay] = useState('');
  const form = useFormErrors(['Name', 'MaxPerSecond', 'MaxPerDay'], ACCOUNT_HELP);
  return (
    <form
      class="compose card"
      aria-label="Create an account"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const body: Record<string, string> = { Name: name };
        const second = typed(perSecond);
        const day = typed(perDay);
        if (second !== undefined) body.MaxPerSecond = second;
        if (day !== undefined) body.MaxPerDay = day;
        void submitForm(
          () => props.api.admin<Account>('POST', '/admin/v1/accounts/create', { body }),
          form,
          (data) => {
            if (data === undefined) return;
            setName('');
            setPerSecond('');
            setPerDay('');
            props.onCreated(data);
          },
        );
      }}
    >
      <h2>Create an account</h2>
      <div class="form-grid">
        <div class="wide">
          <label for="op-account-name">Name</label>
          <input
            id="op-account-name"
            maxLength={255}
            autoComplete="off"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            {...form.aria('Name', 'op-account-name')}
          />
          <FieldMessage form={form} field="Name" id="op-account-name" />
        </div>
        <QuotaInputs
          form={form}
          prefix="op-account"
          perSecond={perSecond}
          setPerSecond={setPerSecond}
          perDay={perDay}
          setPerDay={setPerDay}
          hintId="op-account-quota-hint"
        />
        <p class="hint wide" id="op-account-quota-hint">
          A top-level account, with 0 credits: top it up on its page. Quotas: empty or 0 is no limit of its own (the service's limits still
          apply).
        </p>
      </div>
      <GeneralError form={form} />
      <button type="submit">Create account</button>
    </form>
  );
}
