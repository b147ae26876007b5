import { useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';

type Group = components['schemas']['Group'];
type Contact = components['schemas']['Contact'];

/**
 * Groups (groups/index, paged): create one (groups/create), delete one (groups/delete), and each
 * group's members (contacts/index with `GroupId`, paged), added by number (contacts/find, then
 * groups/add-contacts) or removed (groups/remove-contacts) (docs/API.md §10.3). Changes need
 * `groups:write`.
 */
export function Groups(props: { api: Api }) {
  const writable = props.api.can('groups:write');
  const list = usePagedList<Group>(
    (page) => props.api.GET('/v1/groups/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [props.api],
  );
  const [name, setName] = useState('');
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [open, setOpen] = useState<number | undefined>();

  return (
    <>
      <h1>Groups</h1>
      {writable && (
        <form
          class="compose card"
          aria-label="Create a group"
          onSubmit={(e) => {
            e.preventDefault();
            void submit(
              () => props.api.POST('/v1/groups/create', { body: { fname: name, ...(note === '' ? {} : { fnote: note }) } }),
              setError,
              () => {
                setName('');
                setNote('');
                list.reload();
              },
            );
          }}
        >
          <h2>Create a group</h2>
          <label for="group-name">Name</label>
          <input id="group-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <label for="group-note">Note (optional)</label>
          <input id="group-note" value={note} onInput={(e) => setNote(e.currentTarget.value)} />
          <ErrorLine error={error} />
          <button type="submit">Create group</button>
        </form>
      )}
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No groups.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((g) => (
            <li key={g.Id} class="card" data-testid="group">
              <p>
                <strong>{g.Name}</strong> · <span data-testid="member-count">{(g.PhoneNumberIds ?? []).length}</span> members
              </p>
              {(g.Note ?? '') !== '' && <p class="text">{g.Note}</p>}
              <div class="actions">
                <button type="button" aria-expanded={open === g.Id} onClick={() => setOpen(open === g.Id ? undefined : g.Id)}>
                  {open === g.Id ? 'Hide members' : 'Members'}
                </button>
                {writable && (
                  <button
                    type="button"
                    class="secondary"
                    onClick={() =>
                      void submit(
                        () => props.api.DELETE('/v1/groups/delete', { params: { query: { id: String(g.Id) } } }),
                        setError,
                        list.reload,
                      )
                    }
                  >
                    Delete group
                  </button>
                )}
              </div>
              {open === g.Id && <Members api={props.api} writable={writable} groupId={String(g.Id)} onChange={list.reload} />}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="groups" />
    </>
  );
}

/** A group's members, paged, with a number box to add one and a Remove button on each. */
function Members(props: { api: MsgsvcClient; writable: boolean; groupId: string; onChange: () => void }) {
  const list = usePagedList<Contact>(
    (page) =>
      props.api.GET('/v1/contacts/index', {
        params: { query: { GroupId: props.groupId, page: String(page), 'per-page': '20' } },
      }),
    [props.api, props.groupId],
  );
  const [number, setNumber] = useState('');
  const [error, setError] = useState<string | undefined>();
  const changed = () => {
    list.reload();
    props.onChange();
  };

  async function add(event: Event) {
    event.preventDefault();
    setError(undefined);
    try {
      const found = await props.api.GET('/v1/contacts/find', { params: { query: { number } } });
      if (found.error !== undefined) return setError(errorText(found.error, found.response.status));
      await submit(
        () =>
          props.api.POST('/v1/groups/add-contacts', {
            params: { query: { id: props.groupId } },
            body: { PhoneNumberIds: [found.data.Id ?? 0] },
          }),
        setError,
        () => {
          setNumber('');
          changed();
        },
      );
    } catch {
      setError('The server could not be reached.');
    }
  }

  return (
    <section aria-label={`Members of group ${props.groupId}`}>
      <h2>Members</h2>
      {props.writable && (
        <form class="filters" aria-label="Add a member" onSubmit={(e) => void add(e)}>
          <label>
            Contact's number
            <input type="tel" value={number} onInput={(e) => setNumber(e.currentTarget.value)} />
          </label>
          <button type="submit">Add member</button>
        </form>
      )}
      <ErrorLine error={list.error ?? error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No members.</p>
      ) : (
        <ul class="members">
          {list.rows.map((c) => (
            <li key={c.Id} data-testid="member" data-number={c.Number}>
              <span>
                {c.FirstName} {c.LastName} <span class="nowrap">+{c.Number}</span>
              </span>{' '}
              {props.writable && (
                <button
                  type="button"
                  class="link"
                  onClick={() =>
                    void submit(
                      () =>
                        props.api.POST('/v1/groups/remove-contacts', {
                          params: { query: { id: props.groupId } },
                          body: { PhoneNumberIds: [c.Id ?? 0] },
                        }),
                      setError,
                      changed,
                    )
                  }
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="members" />
    </section>
  );
}
