import { useState } from 'preact/hooks';
import type { Api, User } from '../api.ts';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';
import { ConfirmButton, ShownOnce, When } from './ui.tsx';
import { focusHeading, Notice, useNotice } from './template-kit.tsx';

type Role = User['Role'];

/** docs/API.md §15: what each role may do. */
const ROLES: readonly [Role, string][] = [
  ['viewer', 'Viewer: reads everything but keys, people and the audit log'],
  ['member', 'Member: a viewer who also sends messages and edits contacts, groups, fields, keywords and media'],
  ['admin', 'Admin: everything'],
  ['owner', 'Owner: everything, and alone makes or unmakes owners'],
];

/** The roles the signed-in credential may give: only an owner gives or takes `owner`. */
function assignable(api: Api): readonly [Role, string][] {
  return api.session.User?.Role === 'owner' ? ROLES : ROLES.filter(([role]) => role !== 'owner');
}

/**
 * People (docs/API.md §15, `/v1/users/…`): who may sign in to the console, with their role and
 * two-factor state; invite one (users/create, whose InviteUrl is shown to be sent to them), change a
 * role (users/update), reset one's password (users/reset: a new InviteUrl, their sessions ended)
 * and remove one (users/delete), both asked twice.
 */
export function People(props: { api: Api }) {
  const { api } = props;
  const list = usePagedList<User>(
    (page) => api.call<User[]>('GET', '/v1/users/index', { query: { page: String(page), 'per-page': '20' } }),
    [api],
  );
  const [invite, setInvite] = useState<{ email: string; url: string } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const { notice, say } = useNotice();
  const writable = api.can('users:write');

  /** Shows the InviteUrl of a users/create or users/reset answer. */
  const showInvite = (answer: { data?: User & { InviteUrl?: string } }) => {
    if (answer.data?.InviteUrl !== undefined) setInvite({ email: answer.data.Email, url: answer.data.InviteUrl });
  };

  return (
    <>
      <h1>People</h1>
      <p class="hint">The people who sign in to this console, and what their role lets them do.</p>
      <Notice notice={notice} />
      {invite !== undefined && (
        <ShownOnce
          title={`Invitation for ${invite.email}`}
          value={invite.url}
          warning="Send this link to them: it lets them choose a password once, within 72 hours. It is not shown again."
          onDone={() => {
            setInvite(undefined);
            focusHeading();
          }}
        />
      )}
      {writable && (
        <InvitePerson
          api={api}
          onInvited={(answer) => {
            showInvite(answer);
            list.reload();
          }}
        />
      )}
      <ErrorLine error={list.error ?? error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No people.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((u) => (
            <li key={u.Id} class="card" data-testid="person" data-email={u.Email}>
              <p>
                <strong class="text">{u.Name || u.Email}</strong> <span class="text">{u.Email}</span>
                {u.Id === api.session.User?.Id && ' (you)'}
              </p>
              <p>
                Role: <strong data-testid="role">{u.Role}</strong> · Two-factor: {u.TwoFactor === 1 ? 'on' : 'off'} · Last sign-in:{' '}
                <When value={u.DateLastSignIn} empty="never" />
              </p>
              <p class="hint">
                Added <When value={u.DateCreated} />
              </p>
              {writable && (
                <div class="actions">
                  <ChangeRole
                    api={api}
                    user={u}
                    onDone={(role) => {
                      say(`${u.Email} is now ${role}.`);
                      list.reload();
                    }}
                    setError={setError}
                  />
                  <ConfirmButton
                    label="Reset password"
                    ariaLabel={`Reset the password of ${u.Email}`}
                    question={`Reset the password of ${u.Email}? They are signed out everywhere and need the new invitation link to sign in again.`}
                    confirm="Reset password"
                    onConfirm={() =>
                      submit(
                        async () => {
                          const answer = await api.call<User & { InviteUrl?: string }>('POST', '/v1/users/reset', {
                            query: { id: String(u.Id) },
                          });
                          showInvite(answer);
                          return answer;
                        },
                        setError,
                        list.reload,
                      )
                    }
                  />
                  <ConfirmButton
                    label="Remove"
                    ariaLabel={`Remove ${u.Email}`}
                    question={`Remove ${u.Email} from this account? They are signed out at once and can no longer sign in.`}
                    confirm="Remove person"
                    onConfirm={() =>
                      submit(
                        () => api.call('DELETE', '/v1/users/delete', { query: { id: String(u.Id) } }),
                        (e) => {
                          setError(e);
                          if (e !== undefined) say(`${u.Email} was not removed.`);
                        },
                        () => {
                          say(`${u.Email} was removed from this account.`);
                          list.reload();
                        },
                      )
                    }
                  />
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="people" />
    </>
  );
}

/** A role picker and Save (users/update with `Role`). */
function ChangeRole(props: { api: Api; user: User; onDone: (role: Role) => void; setError: (error: string | undefined) => void }) {
  const [role, setRole] = useState<Role>(props.user.Role);
  const id = `role-${props.user.Id}`;
  const roles = assignable(props.api);
  // An owner seen by an admin: the role cannot be changed from here.
  const fixed = !roles.some(([r]) => r === props.user.Role);
  return (
    <form
      class="inline"
      aria-label={`Role of ${props.user.Email}`}
      onSubmit={(e) => {
        e.preventDefault();
        void submit(
          () => props.api.call('PUT', '/v1/users/update', { query: { id: String(props.user.Id) }, body: { Role: role } }),
          props.setError,
          () => props.onDone(role),
        );
      }}
    >
      <label for={id}>Role</label>
      <select id={id} value={role} disabled={fixed} onInput={(e) => setRole(e.currentTarget.value as Role)}>
        {(fixed ? ROLES.filter(([r]) => r === props.user.Role) : roles).map(([r]) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <button type="submit" disabled={fixed || role === props.user.Role}>
        Change role
      </button>
    </form>
  );
}

/** Invites a person (users/create): email, name and role; the answer (with InviteUrl) goes to `onInvited`. */
function InvitePerson(props: { api: Api; onInvited: (answer: { data?: User & { InviteUrl?: string } }) => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [error, setError] = useState<string | undefined>();
  return (
    <form
      class="compose card"
      aria-label="Invite a person"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(
          async () => {
            const answer = await props.api.call<User & { InviteUrl?: string }>('POST', '/v1/users/create', {
              body: { Email: email.trim(), Name: name.trim(), Role: role },
            });
            if (answer.data !== undefined) props.onInvited(answer);
            return answer;
          },
          setError,
          () => {
            setEmail('');
            setName('');
          },
        );
      }}
    >
      <h2>Invite a person</h2>
      <label for="person-email">Their email</label>
      <input id="person-email" type="email" autocomplete="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      <label for="person-name">Their name</label>
      <input id="person-name" autocomplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <fieldset class="roles">
        <legend>Role</legend>
        {assignable(props.api).map(([r, text]) => (
          <label key={r} class="check">
            <input type="radio" name="person-role" value={r} checked={role === r} onInput={() => setRole(r)} />
            {text}
          </label>
        ))}
      </fieldset>
      <ErrorLine error={error} />
      <button type="submit">Invite</button>
    </form>
  );
}
