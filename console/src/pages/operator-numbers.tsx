/**
 * The service's numbers, for the operator (docs/API.md §16.4, `/admin/v1/numbers/…`):
 * `#/operator-numbers` lists every account's numbers (numbers/index, paged in the URL, filtered by
 * `AccountId` and `Number` kept in the URL too), each with the account holding it; a number is
 * added to an account (numbers/create), moved to another or given another status (numbers/update:
 * `AccountId`, `Status_Id`), and taken away (numbers/delete, asked first). An account's page shows
 * the same section for its own numbers (NumbersSection with `accountId`).
 */
import { useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { NUMBER_STATUSES } from '../../../src/records/statuses.ts';
import type { Api } from '../api.ts';
import { placeHref, useUrlFilters } from '../route.ts';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp, type FormErrors } from './fields.tsx';
import { numberText, STATUS_WORDS } from './numbers.tsx';
import { Notice, useNotice } from './template-kit.tsx';
import { ConfirmButton, useDraft, When } from './ui.tsx';
import { accountLabel, useAllAccounts, type Account, type ServiceNumber } from './operator-kit.ts';

type Accounts = ReturnType<typeof useAllAccounts>;

/** What the API's messages on a number's fields mean here (docs/API.md §16.4, numbers/create and update). */
const NUMBER_HELP: FieldHelp = {
  Number: {
    'Number cannot be blank.': 'Write the number: a short code, or a phone number with its country code.',
    'Number is invalid.': 'Write a short code of 3 to 8 digits, or a whole phone number such as +15550001111.',
  },
  AccountId: {
    'Account Id cannot be blank.': 'Choose the account that is to hold it.',
    'Account Id is invalid.': 'Choose an account that exists and is not closed.',
  },
  Status_Id: { 'Status Id is invalid.': 'Choose one of the statuses listed.' },
};

const FIELDS = ['Number', 'AccountId', 'Status_Id'];

const FILTERS = ['AccountId', 'Number'] as const;

/** The page: the filters, the add form and every number. */
export function OperatorNumbers(props: { api: Api }) {
  const { applied, apply } = useUrlFilters(FILTERS);
  const [draft, setDraft] = useDraft(applied, `${applied.AccountId}\n${applied.Number}`);
  const { notice, say } = useNotice();
  return (
    <>
      <h1>Numbers</h1>
      <p class="hint">
        The short codes and long numbers of the service, and the account that holds each: only that account sends from it and receives on
        it. A shared short code is held by several accounts, one line each.
      </p>
      <Notice notice={notice} />
      <NumbersSection api={props.api} filter={applied} say={say}>
        <form
          class="filters"
          aria-label="Filters"
          onSubmit={(e) => {
            e.preventDefault();
            apply(draft);
          }}
        >
          <label>
            Account Id
            <input
              inputMode="numeric"
              autoComplete="off"
              value={draft.AccountId}
              onInput={(e) => setDraft({ ...draft, AccountId: e.currentTarget.value })}
            />
          </label>
          <label>
            Number
            <input
              inputMode="tel"
              autoComplete="off"
              value={draft.Number}
              onInput={(e) => setDraft({ ...draft, Number: e.currentTarget.value })}
            />
          </label>
          <button type="submit">Filter</button>
        </form>
      </NumbersSection>
    </>
  );
}

/**
 * The add form and the list of numbers (`filter`: numbers/index's AccountId and Number; `children`
 * above the list); with `accountId`, one account's, added to it (an account's page: its list paged
 * in the component, its headings a level down).
 */
export function NumbersSection(props: {
  api: Api;
  say: (text: string | undefined) => void;
  filter?: { AccountId: string; Number: string };
  accountId?: string;
  /** False for a closed account: nothing is added to it. */
  addable?: boolean;
  children?: ComponentChildren;
}) {
  const { api, say, accountId } = props;
  const filter = accountId === undefined ? (props.filter ?? { AccountId: '', Number: '' }) : { AccountId: accountId, Number: '' };
  const [tick, setTick] = useState(0);
  const accounts = useAllAccounts(api, [tick]);
  const list = usePagedList<ServiceNumber>(
    (page) => {
      const query: Record<string, string> = { page: String(page), 'per-page': '20' };
      if (filter.AccountId.trim() !== '') query.AccountId = filter.AccountId.trim();
      if (filter.Number.trim() !== '') query.Number = filter.Number.trim();
      return api.admin<ServiceNumber[]>('GET', '/admin/v1/numbers/index', { query });
    },
    [api, filter.AccountId, filter.Number],
    accountId === undefined ? {} : { param: null },
  );
  const changed = (text: string) => {
    say(text);
    list.reload();
    setTick((n) => n + 1);
  };
  const Heading = accountId === undefined ? 'h2' : 'h3';
  return (
    <>
      {props.addable !== false && <AddNumber api={api} accounts={accounts} accountId={accountId} onAdded={changed} heading={Heading} />}
      <Heading>{accountId === undefined ? 'All numbers' : 'Its numbers'}</Heading>
      {props.children}
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        list.error === undefined && <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No numbers.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((n) => (
            <NumberCard key={`${n.Number}-${n.AccountId}`} api={api} number={n} accounts={accounts} onChanged={changed} />
          ))}
        </ul>
      )}
      <Pager list={list} noun="numbers" />
    </>
  );
}

/** One number: who holds it, its status, and its change and remove controls. */
function NumberCard(props: { api: Api; number: ServiceNumber; accounts: Accounts; onChanged: (text: string) => void }) {
  const { api, number: n } = props;
  const [error, setError] = useState<string | undefined>();
  const holder = props.accounts?.rows.find((a) => a.Id === n.AccountId);
  const text = numberText(n.Number);
  const where = { number: n.Number, AccountId: String(n.AccountId) };
  return (
    <li class="card" data-testid="service-number" data-number={n.Number} data-account={n.AccountId} data-status={n.Status_Id}>
      <p>
        <strong>{text}</strong> · held by{' '}
        <a href={placeHref('operator-accounts', n.AccountId)} data-testid="number-account">
          {holder === undefined ? `account ${n.AccountId}` : accountLabel(holder)}
        </a>
      </p>
      <p data-testid="status-words">{STATUS_WORDS[n.Status_Id] ?? `Status ${n.Status_Id}`}</p>
      <p class="hint">
        Status_Id {n.Status_Id} ({n.Status_Description}) ·{' '}
        {n.Blocked_Date === null ? (
          'not blocked'
        ) : (
          <>
            blocked since <When value={n.Blocked_Date} />
          </>
        )}{' '}
        · added <When value={n.DateCreated} />
      </p>
      <ChangeNumber api={api} number={n} accounts={props.accounts} onChanged={props.onChanged} />
      <ErrorLine error={error} />
      <div class="actions">
        <ConfirmButton
          label="Remove"
          ariaLabel={`Remove ${text} from account ${n.AccountId}`}
          question={`Take ${text} from ${holder === undefined ? `account ${n.AccountId}` : `“${holder.Name ?? ''}”`}? Its keywords reserved on it are deleted with it; its messages stay in the log.`}
          confirm="Remove number"
          onConfirm={() =>
            submit(
              () => api.admin('DELETE', '/admin/v1/numbers/delete', { query: where }),
              setError,
              () => props.onChanged(`${text} was taken from account ${n.AccountId}.`),
            )
          }
        />
      </div>
    </li>
  );
}

/** Moves a number to another account and changes its status (numbers/update, the fields changed only). */
function ChangeNumber(props: { api: Api; number: ServiceNumber; accounts: Accounts; onChanged: (text: string) => void }) {
  const { number: n } = props;
  const [account, setAccount] = useState(String(n.AccountId));
  const [status, setStatus] = useState(String(n.Status_Id));
  const form = useFormErrors(FIELDS, NUMBER_HELP);
  const id = `number-${n.Number}-${n.AccountId}`;
  const text = numberText(n.Number);
  return (
    <form
      class="inline"
      aria-label={`Change ${text} of account ${n.AccountId}`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const body: Record<string, string> = {};
        if (account.trim() !== String(n.AccountId)) body.AccountId = account.trim();
        if (status !== String(n.Status_Id)) body.Status_Id = status;
        if (Object.keys(body).length === 0) return form.setGeneral('Nothing to save: choose another account or status.');
        void submitForm(
          () =>
            props.api.admin<ServiceNumber>('PUT', '/admin/v1/numbers/update', {
              query: { number: n.Number, AccountId: String(n.AccountId) },
              body,
            }),
          form,
          (data) =>
            props.onChanged(
              data !== undefined && data.AccountId !== n.AccountId
                ? `${text} moved from account ${n.AccountId} to account ${data.AccountId}.`
                : `${text} is now ${data?.Status_Description ?? 'changed'}.`,
            ),
        );
      }}
    >
      <AccountChoice id={`${id}-account`} label="Account" accounts={props.accounts} value={account} onChange={setAccount} form={form} />
      <StatusChoice id={`${id}-status`} value={status} onChange={setStatus} form={form} />
      <button type="submit" class="secondary">
        Save
      </button>
      <GeneralError form={form} />
    </form>
  );
}

/** Gives an account a number (numbers/create): the number, the account (fixed on an account's page) and its status. */
function AddNumber(props: {
  api: Api;
  accounts: Accounts;
  accountId: string | undefined;
  onAdded: (text: string) => void;
  heading: 'h2' | 'h3';
}) {
  const Heading = props.heading;
  const [number, setNumber] = useState('');
  const [account, setAccount] = useState(props.accountId ?? '');
  const [status, setStatus] = useState('0');
  const form = useFormErrors(FIELDS, NUMBER_HELP);
  return (
    <form
      class="compose card"
      aria-label="Add a number"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const body = { Number: number.trim(), AccountId: (props.accountId ?? account).trim(), Status_Id: status };
        void submitForm(
          () => props.api.admin<ServiceNumber>('POST', '/admin/v1/numbers/create', { body }),
          form,
          (data) => {
            if (data === undefined) return;
            setNumber('');
            props.onAdded(`${numberText(data.Number)} now belongs to account ${data.AccountId}.`);
          },
        );
      }}
    >
      <Heading>Add a number</Heading>
      <div class="form-grid">
        <div>
          <label for="add-number">Number</label>
          <input
            id="add-number"
            inputMode="tel"
            autoComplete="off"
            value={number}
            onInput={(e) => setNumber(e.currentTarget.value)}
            {...form.aria('Number', 'add-number')}
          />
          <FieldMessage form={form} field="Number" id="add-number" />
        </div>
        {props.accountId === undefined && (
          <div>
            <AccountChoice
              id="add-number-account"
              label="Account"
              accounts={props.accounts}
              value={account}
              onChange={setAccount}
              form={form}
            />
          </div>
        )}
        <div>
          <StatusChoice id="add-number-status" value={status} onChange={setStatus} form={form} />
        </div>
      </div>
      <GeneralError form={form} />
      <button type="submit">Add number</button>
    </form>
  );
}

/**
 * The account a number goes to: a choice of the accounts not closed (and the one chosen now), or,
 * when there are too many to read (accounts.complete false) or they cannot be read, its Id typed.
 */
function AccountChoice(props: {
  id: string;
  label: string;
  accounts: Accounts;
  value: string;
  onChange: (value: string) => void;
  form: FormErrors;
}) {
  const { id, accounts } = props;
  const choices = accounts?.complete
    ? accounts.rows.filter((a: Account) => a.Status !== 'closed' || String(a.Id) === props.value)
    : undefined;
  return (
    <>
      <label for={id}>{props.label}</label>
      {choices === undefined ? (
        <input
          id={id}
          inputMode="numeric"
          autoComplete="off"
          value={props.value}
          onInput={(e) => props.onChange(e.currentTarget.value)}
          {...props.form.aria('AccountId', id)}
        />
      ) : (
        <select id={id} value={props.value} onInput={(e) => props.onChange(e.currentTarget.value)} {...props.form.aria('AccountId', id)}>
          {props.value === '' && <option value="">Choose an account</option>}
          {choices.map((a) => (
            <option key={a.Id} value={String(a.Id)}>
              {accountLabel(a)}
            </option>
          ))}
        </select>
      )}
      <FieldMessage form={props.form} field="AccountId" id={id} />
    </>
  );
}

/** A number's status (docs/API.md §9.2): Active, Inactive, blocked for a while or for good. */
function StatusChoice(props: { id: string; value: string; onChange: (value: string) => void; form: FormErrors }) {
  return (
    <>
      <label for={props.id}>Status</label>
      <select
        id={props.id}
        value={props.value}
        onInput={(e) => props.onChange(e.currentTarget.value)}
        {...props.form.aria('Status_Id', props.id)}
      >
        {Object.entries(NUMBER_STATUSES).map(([value, name]) => (
          <option key={value} value={value}>
            {`${name.replace(/\.$/, '')} (${value})`}
          </option>
        ))}
      </select>
      <FieldMessage form={props.form} field="Status_Id" id={props.id} />
    </>
  );
}
