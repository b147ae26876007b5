/**
 * One sub-account (`#/subaccounts/<id>`, docs/API.md §16.1): its record (subaccounts/view); its
 * Name and quotas edited (subaccounts/update, only the fields changed); Suspend and Resume
 * (`Status`); Close (subaccounts/delete, asked first); credits given and taken back
 * (subaccounts/credits); a key made for it (subaccounts/keys, its secret shown once); a person
 * invited to it (subaccounts/users, the invitation link shown once); and a number of this account
 * moved to it and back (subaccounts/numbers, POST and DELETE). Changes need `subaccounts:write`; a
 * closed sub-account takes none.
 */
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { grantsAll, roleScopes, type Scope } from '../../../src/domain/scopes.ts';
import { errorText, type Answer, type Api, type Key, type User } from '../api.ts';
import { placeHref } from '../route.ts';
import { ErrorLine } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp, type FormErrors } from './fields.tsx';
import { QuotaInputs } from './subaccount-fields.tsx';
import { ScopePicker } from './keys.tsx';
import { ConfirmButton, ShownOnce, When } from './ui.tsx';
import { everyPage, focusHeading, Notice, type NoticeState } from './template-kit.tsx';
import { quotaText, STATUS_WORDS, SUBACCOUNT_HELP, typed, useBalance, type Subaccount } from './subaccount-kit.ts';

type AccountNumber = components['schemas']['Number'];
type Role = User['Role'];

/** A number as people read it: a short code as it is (`55155`), a long number with `+`. */
function numberText(n: string): string {
  return n.length <= 6 ? n : `+${n}`;
}

/** What a secret shown once is: a key's secret or an invitation link. */
export interface Once {
  title: string;
  value: string;
  warning: string;
}

/**
 * Where the forms an account's page shares (EditSubaccount, MakeKey, InvitePerson) send their writes,
 * and how they name the account: here a sub-account's operations (subaccountWrites); on the
 * operator's page of an account (operator-account.tsx), the operator's.
 */
export interface AccountWrites {
  /** The account as the forms' names say it: "the sub-account", "the account". */
  noun: string;
  update(body: Record<string, string>): Promise<Answer<Subaccount>>;
  key(body: { Name: string; Scopes: Scope[] }): Promise<Answer<Key>>;
  invite(body: { Email: string; Name: string; Role: Role }): Promise<Answer<User & { InviteUrl?: string }>>;
  /** Who a key made for it is for (the hint of its form). */
  keyHint: string;
  /** The resources its keys are never given (ScopePicker's `omit`). */
  omit: readonly string[];
}

/** A sub-account's writes (subaccounts/update, keys, users), by its `id`. */
function subaccountWrites(api: Api, id: string): AccountWrites {
  return {
    noun: 'the sub-account',
    update: (body) => api.call<Subaccount>('PATCH', '/v1/subaccounts/update', { query: { id }, body }),
    key: (body) => api.call<Key>('POST', '/v1/subaccounts/keys', { query: { id }, body }),
    invite: (body) => api.call<User & { InviteUrl?: string }>('POST', '/v1/subaccounts/users', { query: { id }, body }),
    keyHint: "For a program of the sub-account's owner: it acts in the sub-account only, and never reaches sub-accounts.",
    omit: ['subaccounts'],
  };
}

export function SubaccountView(props: { api: Api; id: string; notice: NoticeState; say: (text: string | undefined) => void }) {
  const { api, id, say } = props;
  const writable = api.can('subaccounts:write');
  const writes = subaccountWrites(api, id);
  const [sub, setSub] = useState<Subaccount | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  // The balance of this account moves with every transfer: read again after each.
  const [moves, setMoves] = useState(0);
  const balance = useBalance(api, moves);
  const [once, setOnce] = useState<Once | undefined>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    api
      .GET('/v1/subaccounts/view', { params: { query: { id } } })
      .then(({ data, error, response }) => {
        if (!live) return;
        if (response.status === 404) return setError('There is no such sub-account: it belongs to no account of yours.');
        if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
        setError(undefined);
        setSub(data);
      })
      .catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [api, id, tick]);

  /** After a change the API answered with the record: show it, and read this account's balance again. */
  const changed = (next: Subaccount | undefined, text: string) => {
    if (next !== undefined) setSub(next);
    else setTick((n) => n + 1);
    setMoves((n) => n + 1);
    say(text);
  };

  async function setStatus(status: 'active' | 'suspended') {
    setBusy(true);
    try {
      const { data, error, response } = await api.PATCH('/v1/subaccounts/update', { params: { query: { id } }, body: { Status: status } });
      if (error !== undefined || data === undefined) say(errorText(error, response.status));
      else
        changed(
          data,
          status === 'suspended'
            ? `“${data.Name ?? ''}” is suspended: it can read, but it cannot send or change anything until it is resumed.`
            : `“${data.Name ?? ''}” is active again: its waiting messages go out.`,
        );
    } catch {
      say('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  async function close(name: string, credits: number) {
    try {
      const { error, response } = await api.DELETE('/v1/subaccounts/delete', { params: { query: { id } } });
      if (error !== undefined || !response.ok) return say(errorText(error, response.status));
      changed(undefined, `“${name}” is closed: its ${credits} credits came back to this account, and its keys stopped working.`);
    } catch {
      say('The server could not be reached.');
    }
  }

  const name = sub?.Name ?? '';
  const closed = sub?.Status === 'closed';
  const credits = sub?.AvailableCredits ?? 0;
  return (
    <>
      <h1>Sub-account {id}</h1>
      <p>
        <a href={placeHref('subaccounts')}>All sub-accounts</a>
      </p>
      <Notice notice={props.notice} />
      {once !== undefined && (
        <ShownOnce
          title={once.title}
          value={once.value}
          warning={once.warning}
          onDone={() => {
            setOnce(undefined);
            focusHeading();
          }}
        />
      )}
      <ErrorLine error={error} />
      {sub === undefined ? (
        error === undefined ? (
          <p role="status">Loading…</p>
        ) : (
          <button type="button" class="secondary" onClick={() => setTick((n) => n + 1)}>
            Try again
          </button>
        )
      ) : (
        <>
          <dl class="details card" data-testid="subaccount-details">
            <dt>Name</dt>
            <dd class="text" data-testid="subaccount-name">
              {name}
            </dd>
            <dt>Status</dt>
            <dd data-testid="subaccount-status" data-status={sub.Status}>
              {STATUS_WORDS[sub.Status ?? ''] ?? sub.Status}
            </dd>
            <dt>Credits</dt>
            <dd data-testid="subaccount-credits">{credits}</dd>
            <dt>Max per second</dt>
            <dd>{quotaText(sub.MaxPerSecond, 'messages a second')}</dd>
            <dt>Max per day</dt>
            <dd>{quotaText(sub.MaxPerDay, 'messages a day')}</dd>
            <dt>Created</dt>
            <dd>
              <When value={sub.DateCreated} />
            </dd>
            <dt>Changed</dt>
            <dd>
              <When value={sub.DateUpdated} />
            </dd>
          </dl>
          {writable && !closed && (
            <>
              <section class="card" aria-labelledby="sub-state-title">
                <h2 id="sub-state-title">Status</h2>
                <div class="actions">
                  <button type="button" disabled={busy} onClick={() => void setStatus(sub.Status === 'suspended' ? 'active' : 'suspended')}>
                    {sub.Status === 'suspended' ? 'Resume' : 'Suspend'}
                  </button>
                  <ConfirmButton
                    label="Close sub-account"
                    question={
                      `Close sub-account “${name}”? Its Queued messages are rejected and refunded, its scheduled messages are cancelled, ` +
                      `its credits (${credits} now) come back to this account, its keys stop working and its people are signed out. ` +
                      'Its data is kept, but it cannot be made active again: this cannot be undone.'
                    }
                    confirm="Close it"
                    dismiss="Keep it"
                    onConfirm={() => close(name, credits)}
                  />
                </div>
              </section>
              <EditSubaccount key={`${sub.Id}-${sub.DateUpdated}`} writes={writes} sub={sub} onSaved={changed} />
              <MoveCredits api={api} sub={sub} balance={balance} onMoved={changed} />
              <KeyAndInvite api={api} writes={writes} name={name} say={say} show={setOnce} />
              <MoveNumbers api={api} sub={sub} say={say} />
            </>
          )}
          {closed && <p class="hint">A closed sub-account takes no change: its data is kept for its usage and its ledger.</p>}
        </>
      )}
    </>
  );
}

/**
 * The key and invitation forms of an account's page (MakeKey, InvitePerson): what each makes is
 * shown once (`show`), its last status line cleared (`say`).
 */
export function KeyAndInvite(props: {
  api: Api;
  writes: AccountWrites;
  name: string;
  say: (text: string | undefined) => void;
  show: (once: Once) => void;
}) {
  const { name, say, show } = props;
  return (
    <>
      <MakeKey
        api={props.api}
        writes={props.writes}
        onMade={(key) => {
          say(undefined);
          show({
            title: `The secret of key “${key.Name}” of ${name}`,
            value: key.Secret ?? '',
            warning: 'Copy it now and give it to the program that uses it: you will not see it again.',
          });
        }}
      />
      <InvitePerson
        api={props.api}
        writes={props.writes}
        onInvited={(person) => {
          say(undefined);
          show({
            title: `Invitation for ${person.Email} to ${name}`,
            value: person.InviteUrl ?? '',
            warning: 'Send this link to them: it lets them choose a password once, within 72 hours. It is not shown again.',
          });
        }}
      />
    </>
  );
}

/** Name and quotas (`writes.update`, subaccounts/update here, with the fields changed only). */
export function EditSubaccount(props: { writes: AccountWrites; sub: Subaccount; onSaved: (sub: Subaccount, text: string) => void }) {
  const { sub } = props;
  const [name, setName] = useState(sub.Name ?? '');
  const [perSecond, setPerSecond] = useState(String(sub.MaxPerSecond ?? 0));
  const [perDay, setPerDay] = useState(String(sub.MaxPerDay ?? 0));
  const form = useFormErrors(['Name', 'MaxPerSecond', 'MaxPerDay'], SUBACCOUNT_HELP);
  return (
    <form
      class="compose card"
      aria-label={`Edit ${props.writes.noun}`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const body: Record<string, string> = {};
        if (name !== (sub.Name ?? '')) body.Name = name;
        // An emptied quota is no limit of its own: 0.
        const second = typed(perSecond) ?? '0';
        const day = typed(perDay) ?? '0';
        if (second !== String(sub.MaxPerSecond ?? 0)) body.MaxPerSecond = second;
        if (day !== String(sub.MaxPerDay ?? 0)) body.MaxPerDay = day;
        if (Object.keys(body).length === 0) return form.setGeneral('Nothing to save: no field was changed.');
        void submitForm(
          () => props.writes.update(body),
          form,
          (data) => data !== undefined && props.onSaved(data, 'Saved.'),
        );
      }}
    >
      <h2>Name and quotas</h2>
      <div class="form-grid">
        <div class="wide">
          <label for="edit-sub-name">Name</label>
          <input
            id="edit-sub-name"
            maxLength={255}
            autoComplete="off"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            {...form.aria('Name', 'edit-sub-name')}
          />
          <FieldMessage form={form} field="Name" id="edit-sub-name" />
        </div>
        <QuotaInputs
          form={form}
          prefix="edit-sub"
          perSecond={perSecond}
          setPerSecond={setPerSecond}
          perDay={perDay}
          setPerDay={setPerDay}
        />
        <p class="hint wide">0 is no limit of its own (this service's limits still apply).</p>
      </div>
      <GeneralError form={form} />
      <button type="submit">Save changes</button>
    </form>
  );
}

const AMOUNT_HELP: FieldHelp = {
  Amount: {
    'Amount cannot be blank.': 'Write how many credits to move.',
    'Amount must be an integer.': 'Write a whole number of credits.',
    'Amount is invalid.': 'Write a number of credits above 0.',
  },
};

/**
 * Credits given to the sub-account or taken back (subaccounts/credits: a positive `Amount` gives, a
 * negative one takes back): the amount is written without a sign, and the button says which way.
 */
function MoveCredits(props: { api: Api; sub: Subaccount; balance: number | undefined; onMoved: (sub: Subaccount, text: string) => void }) {
  const { sub } = props;
  const [amount, setAmount] = useState('');
  const form = useFormErrors(['Amount'], AMOUNT_HELP);
  const move = (direction: 1 | -1) => {
    const text = amount.trim();
    if (text.startsWith('-') || text.startsWith('+')) {
      return form.set([{ field: 'Amount', message: 'Write the amount without a sign: the button says which way the credits go.' }], 422);
    }
    // The API reads quoted digits as an integer: no rounding of a large amount on the way.
    const value = /^\d+$/.test(text) && direction === -1 ? `-${text}` : text;
    void submitForm(
      () => props.api.call<Subaccount>('POST', '/v1/subaccounts/credits', { query: { id: String(sub.Id) }, body: { Amount: value } }),
      form,
      (data) => {
        if (data === undefined) return;
        setAmount('');
        props.onMoved(
          data,
          direction === 1
            ? `Gave ${text} credits to “${data.Name ?? ''}”: it has ${data.AvailableCredits ?? 0} now.`
            : `Took back ${text} credits from “${data.Name ?? ''}”: it has ${data.AvailableCredits ?? 0} now.`,
        );
      },
    );
  };
  return (
    <form
      class="compose card"
      aria-label="Move credits"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        move(1);
      }}
    >
      <h2>Credits</h2>
      <p data-testid="credit-balances">
        {props.balance === undefined
          ? `This sub-account has ${sub.AvailableCredits ?? 0} credits.`
          : `This sub-account has ${sub.AvailableCredits ?? 0} credits; this account has ${props.balance}.`}
      </p>
      <label for="sub-amount">Amount (credits)</label>
      <input
        id="sub-amount"
        inputMode="numeric"
        autoComplete="off"
        value={amount}
        onInput={(e) => setAmount(e.currentTarget.value)}
        {...form.aria('Amount', 'sub-amount')}
      />
      <FieldMessage form={form} field="Amount" id="sub-amount" />
      <GeneralError form={form} />
      <div class="actions">
        <button type="submit">Give</button>
        <button type="button" class="secondary" onClick={() => move(-1)}>
          Take back
        </button>
      </div>
      <p class="hint">Give moves credits from this account to the sub-account; Take back moves them from the sub-account to this one.</p>
    </form>
  );
}

/** What the API's messages on a key's fields mean here (docs/API.md §15.2). */
const KEY_HELP: FieldHelp = {
  Name: {
    'Name cannot be blank.': 'Name the key after the program that uses it, e.g. "shop" or "billing".',
    'Name should contain at most 64 characters.': 'A key name has 1 to 64 characters.',
    'The account is closed.': 'A closed sub-account takes no new key.',
  },
  Scopes: {
    'Scopes is invalid.': 'Choose at least one scope, and only scopes you hold yourself: a key cannot give more than its maker has.',
  },
};

/** Makes a key of the account (`writes.key`, subaccounts/keys here): a name and its scopes; the secret goes to `onMade`, shown once. */
function MakeKey(props: { api: Api; writes: AccountWrites; onMade: (key: Key) => void }) {
  const { noun } = props.writes;
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(props.api.can('*') ? ['*'] : []);
  const form = useFormErrors(['Name', 'Scopes'], KEY_HELP);
  return (
    <form
      class="compose card"
      aria-label={`Make a key of ${noun}`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void submitForm(
          () => props.writes.key({ Name: name, Scopes: scopes }),
          form,
          (data) => {
            if (data === undefined) return;
            setName('');
            props.onMade(data);
          },
        );
      }}
    >
      <h2>Make a key of {noun}</h2>
      <p class="hint">{props.writes.keyHint}</p>
      <label for="sub-key-name">Key name</label>
      <input
        id="sub-key-name"
        maxLength={64}
        autoComplete="off"
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
        {...form.aria('Name', 'sub-key-name')}
      />
      <FieldMessage form={form} field="Name" id="sub-key-name" />
      <ScopePicker api={props.api} prefix="sub-key" value={scopes} onChange={setScopes} omit={props.writes.omit} />
      <FieldMessage form={form} field="Scopes" id="sub-key-scopes" />
      <GeneralError form={form} />
      <button type="submit">Make key</button>
    </form>
  );
}

/** The roles of docs/API.md §15.3, in words. */
const ROLES: readonly [Role, string][] = [
  ['owner', 'Owner: everything, and alone makes or unmakes owners'],
  ['admin', 'Admin: everything'],
  ['member', 'Member: sends messages and edits contacts, groups, fields, keywords and media'],
  ['viewer', 'Viewer: reads everything but keys, people and the audit log'],
];

/** The roles the signed-in credential may give: what it holds itself, and `owner` only as an owner or with `*`. */
function assignable(api: Api): readonly [Role, string][] {
  const owner = api.session.User !== null ? api.session.User.Role === 'owner' : api.session.Scopes.includes('*');
  return ROLES.filter(([role]) => (role !== 'owner' || owner) && grantsAll(api.session.Scopes, roleScopes(role)));
}

const PERSON_HELP: FieldHelp = {
  Email: {
    'Email cannot be blank.': 'Write the email address they will sign in with.',
    'Email is not a valid email address.': 'Write a whole email address, such as name@example.com.',
  },
  Role: { 'Role is invalid.': 'Choose a role you may give: only an owner (or a key with every scope) gives owner.' },
};

/** Invites a person to the account (`writes.invite`, subaccounts/users here; Role owner by default): the link goes to `onInvited`, shown once. */
function InvitePerson(props: { api: Api; writes: AccountWrites; onInvited: (person: User & { InviteUrl?: string }) => void }) {
  const roles = assignable(props.api);
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>(roles[0]?.[0] ?? 'owner');
  const form = useFormErrors(['Email', 'Name', 'Role'], PERSON_HELP);
  return (
    <form
      class="compose card"
      aria-label={`Invite a person to ${props.writes.noun}`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void submitForm(
          () => props.writes.invite({ Email: email.trim(), Name: name.trim(), Role: role }),
          form,
          (data) => {
            if (data === undefined) return;
            setEmail('');
            setName('');
            props.onInvited(data);
          },
        );
      }}
    >
      <h2>Invite a person to {props.writes.noun}</h2>
      <label for="sub-person-email">Their email</label>
      <input
        id="sub-person-email"
        type="email"
        autoComplete="off"
        value={email}
        onInput={(e) => setEmail(e.currentTarget.value)}
        {...form.aria('Email', 'sub-person-email')}
      />
      <FieldMessage form={form} field="Email" id="sub-person-email" />
      <label for="sub-person-name">Their name</label>
      <input
        id="sub-person-name"
        autoComplete="off"
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
        {...form.aria('Name', 'sub-person-name')}
      />
      <FieldMessage form={form} field="Name" id="sub-person-name" />
      <label for="sub-person-role">Role</label>
      <select
        id="sub-person-role"
        value={role}
        onInput={(e) => setRole(e.currentTarget.value as Role)}
        {...form.aria('Role', 'sub-person-role')}
      >
        {roles.map(([r, text]) => (
          <option key={r} value={r}>
            {text}
          </option>
        ))}
      </select>
      <FieldMessage form={form} field="Role" id="sub-person-role" />
      <GeneralError form={form} />
      <button type="submit">Invite</button>
    </form>
  );
}

const NUMBER_HELP: FieldHelp = {
  Number: {
    'Number is invalid.':
      'Moving in: choose an Active number of this account. Moving back: write a number the sub-account holds that this account does not.',
    'Number cannot be blank.': 'Choose or write a number.',
  },
};

/**
 * Numbers moved between this account and the sub-account (subaccounts/numbers): in, one of this
 * account's Active numbers (numbers/index); back, one the sub-account holds. The API lists the
 * sub-account's numbers only to the sub-account itself, so those moved here on this page are listed
 * with Move back, and any other is written by hand.
 */
function MoveNumbers(props: { api: Api; sub: Subaccount; say: (text: string | undefined) => void }) {
  const { api, sub } = props;
  const id = String(sub.Id);
  const [tick, setTick] = useState(0);
  const [numbers, setNumbers] = useState<AccountNumber[] | undefined>();
  const [listError, setListError] = useState<string | undefined>();
  const [chosen, setChosen] = useState('');
  const [back, setBack] = useState('');
  const [moved, setMoved] = useState<string[]>([]);
  const inForm = useFormErrors(['Number'], NUMBER_HELP);
  const backForm = useFormErrors(['Number'], NUMBER_HELP);
  const readable = api.can('numbers:read');

  useEffect(() => {
    if (!readable) return;
    let live = true;
    everyPage<AccountNumber>((page) => api.GET('/v1/numbers/index', { params: { query: { page: String(page), 'per-page': '100' } } }))
      .then((all) => {
        if (!live) return;
        if (all === undefined) return setListError("This account's numbers could not be read.");
        const active = all.rows.filter((n) => n.Status_Id === 0 && n.Number !== undefined);
        setNumbers(active);
        setChosen((c) => (active.some((n) => n.Number === c) ? c : (active[0]?.Number ?? '')));
      })
      .catch(() => live && setListError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [api, readable, tick]);

  const moveIn = (number: string) =>
    submitForm(
      () => api.POST('/v1/subaccounts/numbers', { params: { query: { id } }, body: { Number: number } }),
      inForm,
      (data) => {
        const digits = data?.Number ?? number;
        setMoved((m) => [...m.filter((n) => n !== digits), digits]);
        setTick((n) => n + 1);
        props.say(`${numberText(digits)} now belongs to “${sub.Name ?? ''}”.`);
      },
    );
  const moveBack = (number: string, form: FormErrors) =>
    submitForm(
      () => api.DELETE('/v1/subaccounts/numbers', { params: { query: { id } }, body: { Number: number } }),
      form,
      () => {
        setMoved((m) => m.filter((n) => n !== number));
        setBack('');
        setTick((n) => n + 1);
        props.say(`${numberText(number)} is back in this account.`);
      },
    );

  return (
    <section class="card" aria-labelledby="sub-numbers-title">
      <h2 id="sub-numbers-title">Numbers</h2>
      <p class="hint">A number moved to the sub-account sends and receives for it alone, until it is moved back.</p>
      <form
        class="compose"
        aria-label="Move a number to the sub-account"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void moveIn(chosen.trim());
        }}
      >
        <ErrorLine error={listError} />
        {readable && numbers !== undefined && numbers.length === 0 ? (
          <p>This account has no Active number to move.</p>
        ) : (
          <>
            {readable ? (
              <>
                <label for="sub-number-in">One of this account's Active numbers</label>
                <select
                  id="sub-number-in"
                  value={chosen}
                  onInput={(e) => setChosen(e.currentTarget.value)}
                  {...inForm.aria('Number', 'sub-number-in')}
                >
                  {(numbers ?? []).map((n) => (
                    <option key={n.Number} value={n.Number}>
                      {numberText(n.Number ?? '')}
                    </option>
                  ))}
                </select>
              </>
            ) : (
              <>
                <label for="sub-number-in">An Active number of this account</label>
                <input
                  id="sub-number-in"
                  autoComplete="off"
                  inputMode="tel"
                  value={chosen}
                  onInput={(e) => setChosen(e.currentTarget.value)}
                  {...inForm.aria('Number', 'sub-number-in')}
                />
              </>
            )}
            <FieldMessage form={inForm} field="Number" id="sub-number-in" />
            <GeneralError form={inForm} />
            <button type="submit" disabled={readable && numbers === undefined}>
              Move to the sub-account
            </button>
          </>
        )}
      </form>
      {moved.length > 0 && (
        <>
          <h3>Moved here on this page</h3>
          <ul class="chips" data-testid="moved-numbers">
            {moved.map((n) => (
              <li key={n}>
                {numberText(n)}{' '}
                <button
                  type="button"
                  class="secondary"
                  aria-label={`Move ${numberText(n)} back`}
                  onClick={() => void moveBack(n, backForm)}
                >
                  Move back
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
      <form
        class="compose"
        aria-label="Move a number back to this account"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void moveBack(back.trim(), backForm);
        }}
      >
        <label for="sub-number-back">A number of the sub-account to move back</label>
        <input
          id="sub-number-back"
          autoComplete="off"
          inputMode="tel"
          value={back}
          onInput={(e) => setBack(e.currentTarget.value)}
          {...backForm.aria('Number', 'sub-number-back')}
        />
        <FieldMessage form={backForm} field="Number" id="sub-number-back" />
        <GeneralError form={backForm} />
        <button type="submit" class="secondary">
          Move back to this account
        </button>
      </form>
    </section>
  );
}
