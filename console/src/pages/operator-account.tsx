/**
 * One account, for the operator (`#/operator-accounts/<id>`, docs/API.md §16.4): its record
 * (accounts/view); Name and quotas edited (accounts/update, only the fields changed); Suspend and
 * Resume (`Status`); Close (accounts/delete, asked first); credits topped up or taken off with a
 * note (accounts/credits: a `topup` or an `adjustment` on its ledger); a key made for it
 * (accounts/keys, its secret shown once); its owner (or another person) invited (accounts/users,
 * the invitation link shown once); and its numbers (numbers/index with its AccountId, added, moved
 * and removed as on the Numbers page). A closed account takes no change.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText, type Answer, type Api, type Key, type User } from '../api.ts';
import { placeHref } from '../route.ts';
import { ErrorLine } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { EditSubaccount, KeyAndInvite, type AccountWrites, type Once } from './subaccount-view.tsx';
import { quotaText } from './subaccount-kit.ts';
import { focusHeading, Notice, type NoticeState } from './template-kit.tsx';
import { ConfirmButton, ShownOnce, When } from './ui.tsx';
import { ACCOUNT_STATUS_WORDS, type Account } from './operator-kit.ts';
import { NumbersSection } from './operator-numbers.tsx';

/** The operator's writes on account `id` (accounts/update, keys, users) for the forms a sub-account's page shares. */
function operatorWrites(api: Api, id: string): AccountWrites {
  const query = { id };
  return {
    noun: 'the account',
    update: (body) => api.admin<Account>('PUT', '/admin/v1/accounts/update', { query, body }),
    key: (body) => api.admin<Key>('POST', '/admin/v1/accounts/keys', { query, body }),
    invite: (body) => api.admin<User & { InviteUrl?: string }>('POST', '/admin/v1/accounts/users', { query, body }),
    keyHint: "For a program of the account's owner: it acts in this account only.",
    omit: [],
  };
}

export function OperatorAccountView(props: { api: Api; id: string; notice: NoticeState; say: (text: string | undefined) => void }) {
  const { api, id, say } = props;
  const [account, setAccount] = useState<Account | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const [once, setOnce] = useState<Once | undefined>();
  const [busy, setBusy] = useState(false);
  const writes = operatorWrites(api, id);

  useEffect(() => {
    let live = true;
    setAccount(undefined);
    api
      .admin<Account>('GET', '/admin/v1/accounts/view', { query: { id } })
      .then(({ data, error, response }) => {
        if (!live) return;
        if (response.status === 404) return setError('There is no such account.');
        if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
        setError(undefined);
        setAccount(data);
      })
      .catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [api, id, tick]);

  /** After a change: the record the API answered (or read again), and the line that says what happened. */
  const changed = (next: Account | undefined, text: string) => {
    if (next !== undefined) setAccount(next);
    else setTick((n) => n + 1);
    say(text);
  };

  /** Runs a status change or the close; its line (or the API's error) in the status line. */
  async function act(call: () => Promise<Answer<Account>>, text: (next: Account | undefined) => string) {
    setBusy(true);
    try {
      const { data, error, response } = await call();
      if (error !== undefined || !response.ok) say(errorText(error, response.status));
      else changed(data, text(data));
    } catch {
      say('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  const name = account?.Name ?? '';
  const closed = account?.Status === 'closed';
  const suspended = account?.Status === 'suspended';
  const credits = account?.AvailableCredits ?? 0;
  const parent = account?.ParentId ?? null;
  return (
    <>
      <h1>Account {id}</h1>
      <p class="actions">
        <a href={placeHref('operator-accounts')}>All accounts</a>
        <a href={placeHref('operator-audit', undefined, { AccountId: id })}>Its audit log</a>
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
      {account === undefined ? (
        error === undefined ? (
          <p role="status">Loading…</p>
        ) : (
          <button type="button" class="secondary" onClick={() => setTick((n) => n + 1)}>
            Try again
          </button>
        )
      ) : (
        <>
          <dl class="details card" data-testid="account-details">
            <dt>Name</dt>
            <dd class="text" data-testid="account-name">
              {name}
            </dd>
            <dt>Status</dt>
            <dd data-testid="account-status" data-status={account.Status}>
              {ACCOUNT_STATUS_WORDS[account.Status ?? ''] ?? account.Status}
            </dd>
            <dt>Parent</dt>
            <dd>{parent === null ? 'None: a top-level account' : <a href={placeHref('operator-accounts', parent)}>Account {parent}</a>}</dd>
            <dt>Credits</dt>
            <dd data-testid="account-credits">{credits}</dd>
            <dt>Max per second</dt>
            <dd>{quotaText(account.MaxPerSecond, 'messages a second')}</dd>
            <dt>Max per day</dt>
            <dd>{quotaText(account.MaxPerDay, 'messages a day')}</dd>
            <dt>Created</dt>
            <dd>
              <When value={account.DateCreated} />
            </dd>
            <dt>Changed</dt>
            <dd>
              <When value={account.DateUpdated} />
            </dd>
          </dl>
          {closed ? (
            <p class="hint">A closed account takes no change: its data is kept for its usage, its ledger and its audit log.</p>
          ) : (
            <>
              <section class="card" aria-labelledby="account-state-title">
                <h2 id="account-state-title">Status</h2>
                <div class="actions">
                  <button
                    type="button"
                    disabled={busy}
                    onClick={() =>
                      void act(
                        () => writes.update({ Status: suspended ? 'active' : 'suspended' }),
                        () =>
                          suspended
                            ? `“${name}” is active again: its waiting messages go out.`
                            : `“${name}” is suspended: it can read, but it cannot send or change anything until it is resumed.`,
                      )
                    }
                  >
                    {suspended ? 'Resume' : 'Suspend'}
                  </button>
                  <ConfirmButton
                    label="Close account"
                    question={
                      `Close account “${name}”, with its sub-accounts if it has any? Their Queued messages are rejected and refunded, ` +
                      'their scheduled messages are cancelled, their keys stop working and their people are signed out. ' +
                      (parent === null
                        ? `It keeps its balance (${credits} credits now). `
                        : `Its credits (${credits} now) go back to its parent, account ${parent}. `) +
                      'Its data is kept, but it cannot be made active again: this cannot be undone.'
                    }
                    confirm="Close it"
                    dismiss="Keep it"
                    onConfirm={() =>
                      act(
                        () => api.admin<Account>('DELETE', '/admin/v1/accounts/delete', { query: { id } }),
                        () => `“${name}” is closed: its keys stopped working and its people were signed out.`,
                      )
                    }
                  />
                </div>
              </section>
              <EditSubaccount key={`${account.Id}-${account.DateUpdated}`} writes={writes} sub={account} onSaved={changed} />
              <ChangeCredits api={api} account={account} onChanged={changed} />
              <KeyAndInvite api={api} writes={writes} name={name} say={say} show={setOnce} />
            </>
          )}
          <section class="card" aria-labelledby="account-numbers-title">
            <h2 id="account-numbers-title">Numbers</h2>
            <NumbersSection api={api} say={say} accountId={id} addable={!closed} />
          </section>
        </>
      )}
    </>
  );
}

const CREDIT_HELP: FieldHelp = {
  Amount: {
    'Amount cannot be blank.': 'Write how many credits to add or take off.',
    'Amount must be an integer.': 'Write a whole number of credits, without a sign: the button says which way.',
    'Amount is invalid.': 'Write a number of credits above 0.',
  },
  Note: { 'Note should contain at most 255 characters.': 'A note has at most 255 characters.' },
};

/**
 * Credits added or taken off (accounts/credits: a positive `Amount` is a `topup` on the account's
 * ledger, a negative one an `adjustment` that never takes it below 0), each with a note kept on the
 * entry: the amount is written without a sign, and the button says which way.
 */
function ChangeCredits(props: { api: Api; account: Account; onChanged: (account: Account, text: string) => void }) {
  const { account } = props;
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const form = useFormErrors(['Amount', 'Note'], CREDIT_HELP);
  const change = (direction: 1 | -1) => {
    const text = amount.trim();
    if (text.startsWith('-') || text.startsWith('+')) {
      return form.set([{ field: 'Amount', message: 'Write the amount without a sign: the button says which way the credits go.' }], 422);
    }
    // The API reads quoted digits as an integer: no rounding of a large amount on the way.
    const body: Record<string, string> = { Amount: /^\d+$/.test(text) && direction === -1 ? `-${text}` : text };
    if (note.trim() !== '') body.Note = note.trim();
    void submitForm(
      () => props.api.admin<Account>('POST', '/admin/v1/accounts/credits', { query: { id: String(account.Id) }, body }),
      form,
      (data) => {
        if (data === undefined) return;
        setAmount('');
        setNote('');
        props.onChanged(
          data,
          direction === 1
            ? `Topped up “${data.Name ?? ''}” with ${text} credits: it has ${data.AvailableCredits ?? 0} now.`
            : `Took ${text} credits off “${data.Name ?? ''}”: it has ${data.AvailableCredits ?? 0} now.`,
        );
      },
    );
  };
  return (
    <form
      class="compose card"
      aria-label="Credits of the account"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        change(1);
      }}
    >
      <h2>Credits</h2>
      <p data-testid="credit-balance">It has {account.AvailableCredits ?? 0} credits.</p>
      <label for="op-amount">Amount (credits)</label>
      <input
        id="op-amount"
        inputMode="numeric"
        autoComplete="off"
        value={amount}
        onInput={(e) => setAmount(e.currentTarget.value)}
        {...form.aria('Amount', 'op-amount')}
      />
      <FieldMessage form={form} field="Amount" id="op-amount" />
      <label for="op-note">Note (kept on its ledger)</label>
      <input
        id="op-note"
        maxLength={255}
        autoComplete="off"
        value={note}
        onInput={(e) => setNote(e.currentTarget.value)}
        {...form.aria('Note', 'op-note')}
      />
      <FieldMessage form={form} field="Note" id="op-note" />
      <GeneralError form={form} />
      <div class="actions">
        <button type="submit">Top up</button>
        <button type="button" class="secondary" onClick={() => change(-1)}>
          Take off
        </button>
      </div>
      <p class="hint">Top up adds a topup entry to its ledger; Take off, an adjustment, which never takes its balance below 0.</p>
    </form>
  );
}
