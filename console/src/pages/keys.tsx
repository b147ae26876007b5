import { useState } from 'preact/hooks';
import { RESOURCES, type Scope } from '../../../src/domain/scopes.ts';
import type { Api, Key } from '../api.ts';
import { setPlace, usePlace } from '../route.ts';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { ConfirmButton, serviceDateTime, ShownOnce, toLocalInput, When } from './ui.tsx';
import { focusHeading, Notice, useNotice } from './template-kit.tsx';

/** Grace periods offered when a key's secret is rolled (GraceSeconds, 0 to 604800). */
const GRACES: readonly [string, string][] = [
  ['0', 'None: the old secret stops now'],
  ['3600', '1 hour'],
  ['86400', '1 day'],
  ['604800', '7 days'],
];

/** A key's scopes in words: "all" for `*`. */
function scopesText(scopes: readonly string[]): string {
  return scopes.includes('*') ? 'All (*)' : scopes.length === 0 ? 'None' : scopes.join(', ');
}

/**
 * Keys (docs/API.md §15, `/v1/keys/…`): the account's keys (keys/index, paged) with their scopes,
 * allowed addresses, expiry and last use; a form to create one (its secret shown once), and on each
 * Edit (keys/update; the key edited is the URL's `edit`), Roll (a new secret, the old one kept for a
 * grace period) and Revoke (keys/delete, asked twice). The API's messages are shown by their field.
 */
export function Keys(props: { api: Api }) {
  const { api } = props;
  const list = usePagedList<Key>(
    (page) => api.call<Key[]>('GET', '/v1/keys/index', { query: { page: String(page), 'per-page': '20' } }),
    [api],
  );
  const [secret, setSecret] = useState<{ name: string; value: string } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [rolling, setRolling] = useState<number | undefined>();
  const { notice, say } = useNotice();
  // The key being edited is in the URL (`#/keys?edit=3`): a reload or Back keeps it.
  const editing = usePlace().params.get('edit') ?? '';
  const writable = api.can('keys:write');

  return (
    <>
      <h1>Keys</h1>
      <p class="hint">Programs call the API with a key. Give each program its own, with only the scopes it needs.</p>
      <Notice notice={notice} />
      {secret !== undefined && (
        <ShownOnce
          title={`The secret of key “${secret.name}”`}
          value={secret.value}
          warning="Copy it now and keep it safe: you will not see it again. Only its first 8 characters are kept in the list."
          onDone={() => {
            setSecret(undefined);
            focusHeading();
          }}
        />
      )}
      {writable && (
        <KeyForm
          api={api}
          onSaved={(key) => {
            setSecret({ name: key.Name, value: key.Secret ?? '' });
            list.reload();
          }}
        />
      )}
      <ErrorLine error={list.error ?? error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No keys.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((k) => (
            <li key={k.Id} class="card" data-testid="key" data-name={k.Name}>
              <p>
                <strong class="text">{k.Name}</strong> <code>{k.Prefix}…</code>
              </p>
              <dl class="details">
                <dt>Scopes</dt>
                <dd>{scopesText(k.Scopes)}</dd>
                <dt>Allowed addresses</dt>
                <dd>{k.AllowedIps.length === 0 ? 'Any' : k.AllowedIps.join(', ')}</dd>
                <dt>Expires</dt>
                <dd>
                  <When value={k.DateExpires} empty="Never" />
                </dd>
                <dt>Last used</dt>
                <dd>
                  <When value={k.DateLastUsed} empty="Never" />
                  {k.DateLastUsed !== null && k.LastIp ? ` from ${k.LastIp}` : ''}
                </dd>
                <dt>Created</dt>
                <dd>
                  <When value={k.DateCreated} />
                </dd>
              </dl>
              {writable &&
                (editing === String(k.Id) ? (
                  <KeyForm
                    api={api}
                    keyRecord={k}
                    onSaved={(saved) => {
                      say(`Key “${saved.Name}” is saved.`);
                      setPlace({ edit: undefined });
                      list.reload();
                    }}
                    onCancel={() => {
                      say(`Key “${k.Name}” is not changed.`);
                      setPlace({ edit: undefined });
                    }}
                  />
                ) : rolling === k.Id ? (
                  <RollKey
                    api={api}
                    keyRecord={k}
                    onDone={(rolled) => {
                      setRolling(undefined);
                      if (rolled !== undefined) {
                        setSecret({ name: rolled.Name, value: rolled.Secret ?? '' });
                        list.reload();
                      } else say(`The secret of “${k.Name}” was not rolled.`);
                    }}
                  />
                ) : (
                  <div class="actions">
                    <button type="button" class="secondary" aria-label={`Edit ${k.Name}`} onClick={() => setPlace({ edit: String(k.Id) })}>
                      Edit
                    </button>
                    <button type="button" aria-label={`Roll the secret of ${k.Name}`} onClick={() => setRolling(k.Id)}>
                      Roll secret
                    </button>
                    <ConfirmButton
                      label="Revoke"
                      ariaLabel={`Revoke ${k.Name}`}
                      question={`Revoke key “${k.Name}”? Every program using it is refused at once; this cannot be undone.`}
                      confirm="Revoke key"
                      onConfirm={() =>
                        submit(
                          () => api.call('DELETE', '/v1/keys/delete', { query: { id: String(k.Id) } }),
                          (e) => {
                            setError(e);
                            if (e !== undefined) say(`Key “${k.Name}” was not revoked.`);
                          },
                          () => {
                            say(`Key “${k.Name}” is revoked.`);
                            list.reload();
                          },
                        )
                      }
                    />
                  </div>
                ))}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="keys" />
    </>
  );
}

/**
 * The scope choice for each resource: none, read, or read and write (only what the signed-in
 * credential holds); `omit` leaves resources out (a sub-account's key never reaches `subaccounts`).
 */
export function ScopePicker(props: {
  api: Api;
  prefix: string;
  value: Scope[];
  onChange: (scopes: Scope[]) => void;
  omit?: readonly string[];
}) {
  const all = props.value.includes('*');
  const level = (resource: string) =>
    props.value.includes(`${resource}:write` as Scope) ? 'write' : props.value.includes(`${resource}:read` as Scope) ? 'read' : '';
  const set = (resource: string, to: string) => {
    const others = props.value.filter((s) => !s.startsWith(`${resource}:`));
    props.onChange(to === '' ? others : [...others, `${resource}:${to}` as Scope]);
  };
  return (
    <fieldset class="events" aria-describedby={`${props.prefix}-scopes-error`}>
      <legend>Scopes</legend>
      {props.api.can('*') && (
        <label class="check">
          <input type="checkbox" checked={all} onInput={(e) => props.onChange(e.currentTarget.checked ? ['*'] : [])} />
          All (*), now and in future versions
        </label>
      )}
      {!all &&
        RESOURCES.filter((r) => props.api.can(`${r}:read`) && !(props.omit ?? []).includes(r)).map((r) => (
          <div key={r}>
            <label for={`${props.prefix}-scope-${r}`}>{r}</label>
            <select id={`${props.prefix}-scope-${r}`} value={level(r)} onInput={(e) => set(r, e.currentTarget.value)}>
              <option value="">No access</option>
              <option value="read">Read</option>
              {props.api.can(`${r}:write`) && <option value="write">Read and write</option>}
            </select>
          </div>
        ))}
    </fieldset>
  );
}

/** What the API's messages on a key's fields mean here (docs/API.md §15.2). */
const KEY_HELP: FieldHelp = {
  Name: {
    'Name cannot be blank.': 'Name the key after the program that uses it, e.g. "ci" or "billing".',
    'Name should contain at most 64 characters.': 'A key name has 1 to 64 characters.',
  },
  Scopes: {
    'Scopes is invalid.': 'Choose at least one scope, and only scopes you hold yourself: a key cannot give more than its maker has.',
  },
  AllowedIps: {
    'Allowed Ips is invalid.':
      'Write IPv4 or IPv6 addresses or ranges (203.0.113.7, 203.0.113.0/24, 2001:db8::/32), one per line, each at most 64 characters; leave it empty for any address.',
  },
  DateExpires: {
    'The format of Date Expires is invalid.': 'Choose a whole date and time, or leave it empty for never.',
    'Date Expires is invalid.': "The expiry must be in the future, in the service's time zone (named at the top of the page).",
  },
};

const KEY_FIELDS = ['Name', 'Scopes', 'AllowedIps', 'DateExpires'];

/**
 * A key's form: a new one (`keyRecord` undefined: keys/create, whose answer's Secret goes to
 * `onSaved`; the form is emptied after) or an edit (keys/update with every field): name, scopes,
 * allowed addresses and expiry, the API's messages by their field.
 */
function KeyForm(props: { api: Api; keyRecord?: Key; onSaved: (key: Key) => void; onCancel?: () => void }) {
  const record = props.keyRecord;
  const prefix = record === undefined ? 'key' : `key-${record.Id}`;
  const [name, setName] = useState(record?.Name ?? '');
  const [scopes, setScopes] = useState<Scope[]>((record?.Scopes as Scope[] | undefined) ?? (props.api.can('*') ? ['*'] : []));
  const [ips, setIps] = useState((record?.AllowedIps ?? []).join('\n'));
  const [expires, setExpires] = useState(toLocalInput(record?.DateExpires));
  const form = useFormErrors(KEY_FIELDS, KEY_HELP);
  return (
    <form
      class="compose card"
      aria-label={record === undefined ? 'Create a key' : `Edit key ${record.Name}`}
      onSubmit={(e) => {
        e.preventDefault();
        const body = {
          Name: name,
          Scopes: scopes,
          AllowedIps: ips
            .split(/[\s,]+/)
            .map((s) => s.trim())
            .filter((s) => s !== ''),
          DateExpires: expires === '' ? null : serviceDateTime(expires),
        };
        void submitForm(
          () =>
            record === undefined
              ? props.api.call<Key>('POST', '/v1/keys/create', { body })
              : props.api.call<Key>('PUT', '/v1/keys/update', { query: { id: String(record.Id) }, body }),
          form,
          (data) => {
            if (data === undefined) return;
            if (record === undefined) {
              setName('');
              setIps('');
              setExpires('');
            }
            props.onSaved(data);
          },
        );
      }}
    >
      <h2>{record === undefined ? 'Create a key' : `Edit key “${record.Name}”`}</h2>
      <label for={`${prefix}-name`}>Key name</label>
      <input
        id={`${prefix}-name`}
        maxLength={64}
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
        {...form.aria('Name', `${prefix}-name`)}
      />
      <FieldMessage form={form} field="Name" id={`${prefix}-name`} />
      <ScopePicker api={props.api} prefix={prefix} value={scopes} onChange={setScopes} />
      <FieldMessage form={form} field="Scopes" id={`${prefix}-scopes`} />
      <label for={`${prefix}-ips`}>Allowed addresses (optional)</label>
      <textarea
        id={`${prefix}-ips`}
        rows={2}
        aria-describedby={form.of('AllowedIps') ? `${prefix}-ips-error` : `${prefix}-ips-hint`}
        aria-invalid={form.of('AllowedIps') ? 'true' : undefined}
        value={ips}
        onInput={(e) => setIps(e.currentTarget.value)}
      />
      <p class="hint" id={`${prefix}-ips-hint`}>
        IPv4 or IPv6 addresses or ranges (203.0.113.0/24), one per line; empty: any address.
      </p>
      <FieldMessage form={form} field="AllowedIps" id={`${prefix}-ips`} />
      <label for={`${prefix}-expires`}>Expires (optional, the service's time zone)</label>
      <input
        id={`${prefix}-expires`}
        type="datetime-local"
        step={1}
        value={expires}
        onInput={(e) => setExpires(e.currentTarget.value)}
        {...form.aria('DateExpires', `${prefix}-expires`)}
      />
      <FieldMessage form={form} field="DateExpires" id={`${prefix}-expires`} />
      <GeneralError form={form} />
      <div class="actions">
        <button type="submit">{record === undefined ? 'Create key' : 'Save changes'}</button>
        {props.onCancel && (
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/** Rolls a key's secret (keys/roll) after asking how long the old one keeps working. */
function RollKey(props: { api: Api; keyRecord: Key; onDone: (rolled: Key | undefined) => void }) {
  const [grace, setGrace] = useState('86400');
  const [error, setError] = useState<string | undefined>();
  const id = String(props.keyRecord.Id);
  return (
    <form
      class="compose confirm"
      aria-label={`Roll the secret of ${props.keyRecord.Name}`}
      onSubmit={(e) => {
        e.preventDefault();
        let rolled: Key | undefined;
        void submit(
          async () => {
            const answer = await props.api.call<Key>('POST', '/v1/keys/roll', { query: { id }, body: { GraceSeconds: Number(grace) } });
            rolled = answer.data;
            return answer;
          },
          setError,
          () => props.onDone(rolled),
        );
      }}
    >
      <p>A new secret replaces the current one. Programs must be given the new secret before the grace period ends.</p>
      <label for={`grace-${id}`}>The old secret keeps working for</label>
      <select id={`grace-${id}`} value={grace} onInput={(e) => setGrace(e.currentTarget.value)}>
        {GRACES.map(([seconds, label]) => (
          <option key={seconds} value={seconds}>
            {label}
          </option>
        ))}
      </select>
      <ErrorLine error={error} />
      <div class="actions">
        <button type="submit" class="danger">
          Roll secret now
        </button>
        <button type="button" class="secondary" onClick={() => props.onDone(undefined)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
