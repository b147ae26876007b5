import { useState } from 'preact/hooks';
import { RESOURCES, type Scope } from '../../../src/domain/scopes.ts';
import type { Api, Key } from '../api.ts';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';
import { ConfirmButton, serviceDateTime, ShownOnce } from './ui.tsx';

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
 * Roll (a new secret, the old one kept for a grace period) and Revoke (keys/delete, asked twice).
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
  const writable = api.can('keys:write');

  return (
    <>
      <h1>Keys</h1>
      <p class="hint">Programs call the API with a key. Give each program its own, with only the scopes it needs.</p>
      {secret !== undefined && (
        <ShownOnce
          title={`The secret of key “${secret.name}”`}
          value={secret.value}
          warning="Copy it now and keep it safe: you will not see it again. Only its first 8 characters are kept in the list."
          onDone={() => setSecret(undefined)}
        />
      )}
      {writable && (
        <CreateKey
          api={api}
          onCreated={(key) => {
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
                <dd>{k.DateExpires ?? 'Never'}</dd>
                <dt>Last used</dt>
                <dd>{k.DateLastUsed === null ? 'Never' : `${k.DateLastUsed}${k.LastIp ? ` from ${k.LastIp}` : ''}`}</dd>
                <dt>Created</dt>
                <dd>{k.DateCreated}</dd>
              </dl>
              {writable &&
                (rolling === k.Id ? (
                  <RollKey
                    api={api}
                    keyRecord={k}
                    onDone={(rolled) => {
                      setRolling(undefined);
                      if (rolled !== undefined) {
                        setSecret({ name: rolled.Name, value: rolled.Secret ?? '' });
                        list.reload();
                      }
                    }}
                  />
                ) : (
                  <div class="actions">
                    <button type="button" aria-label={`Roll the secret of ${k.Name}`} onClick={() => setRolling(k.Id)}>
                      Roll secret
                    </button>
                    <ConfirmButton
                      label="Revoke"
                      ariaLabel={`Revoke ${k.Name}`}
                      question={`Revoke key “${k.Name}”? Every program using it is refused at once; this cannot be undone.`}
                      confirm="Revoke key"
                      onConfirm={() =>
                        submit(() => api.call('DELETE', '/v1/keys/delete', { query: { id: String(k.Id) } }), setError, list.reload)
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

/** The scope choice for each resource: none, read, or read and write (only what the signed-in credential holds). */
function ScopePicker(props: { api: Api; value: Scope[]; onChange: (scopes: Scope[]) => void }) {
  const all = props.value.includes('*');
  const level = (resource: string) =>
    props.value.includes(`${resource}:write` as Scope) ? 'write' : props.value.includes(`${resource}:read` as Scope) ? 'read' : '';
  const set = (resource: string, to: string) => {
    const others = props.value.filter((s) => !s.startsWith(`${resource}:`));
    props.onChange(to === '' ? others : [...others, `${resource}:${to}` as Scope]);
  };
  return (
    <fieldset class="events">
      <legend>Scopes</legend>
      {props.api.can('*') && (
        <label class="check">
          <input type="checkbox" checked={all} onInput={(e) => props.onChange(e.currentTarget.checked ? ['*'] : [])} />
          All (*), now and in future versions
        </label>
      )}
      {!all &&
        RESOURCES.filter((r) => props.api.can(`${r}:read`)).map((r) => (
          <div key={r}>
            <label for={`scope-${r}`}>{r}</label>
            <select id={`scope-${r}`} value={level(r)} onInput={(e) => set(r, e.currentTarget.value)}>
              <option value="">No access</option>
              <option value="read">Read</option>
              {props.api.can(`${r}:write`) && <option value="write">Read and write</option>}
            </select>
          </div>
        ))}
    </fieldset>
  );
}

/** Creates a key (keys/create): name, scopes, allowed addresses, expiry; the answer's Secret goes to `onCreated`. */
function CreateKey(props: { api: Api; onCreated: (key: Key) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(props.api.can('*') ? ['*'] : []);
  const [ips, setIps] = useState('');
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<string | undefined>();
  return (
    <form
      class="compose card"
      aria-label="Create a key"
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
        void submit(
          async () => {
            const answer = await props.api.call<Key>('POST', '/v1/keys/create', { body });
            if (answer.data !== undefined) props.onCreated(answer.data);
            return answer;
          },
          setError,
          () => {
            setName('');
            setIps('');
            setExpires('');
          },
        );
      }}
    >
      <h2>Create a key</h2>
      <label for="key-name">Key name</label>
      <input id="key-name" maxLength={64} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <ScopePicker api={props.api} value={scopes} onChange={setScopes} />
      <label for="key-ips">Allowed addresses (optional)</label>
      <textarea id="key-ips" rows={2} aria-describedby="key-ips-hint" value={ips} onInput={(e) => setIps(e.currentTarget.value)} />
      <p class="hint" id="key-ips-hint">
        IPv4 or IPv6 addresses or ranges (203.0.113.0/24), one per line; empty: any address.
      </p>
      <label for="key-expires">Expires (optional, the service's time zone)</label>
      <input id="key-expires" type="datetime-local" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
      <ErrorLine error={error} />
      <button type="submit">Create key</button>
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
