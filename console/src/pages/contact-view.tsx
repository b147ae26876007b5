/**
 * One contact (`#/contacts/<id>`, docs/API.md §10.2): its fields (contacts/view), Edit
 * (contacts/update, only what changed), Delete (contacts/delete, asked first: its memberships,
 * custom field values and consent ledger go, its messages stay), Erase… (contacts/erase, asked
 * first, naming what goes and what stays: docs/API.md §10.2.1), its groups (groups/add-contacts,
 * groups/remove-contacts, with Undo), its custom field values (contact-values.tsx) and its consent
 * ledger (contacts/consent, §14.4.2).
 */
import { useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { go, placeHref, usePlace } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { ConfirmButton, When, focusHeadingSoon } from './ui.tsx';
import { EditContact } from './contact-form.tsx';
import { ContactValues } from './contact-values.tsx';
import {
  changeMembership,
  contactListParams,
  contactName,
  GroupLink,
  GroupPicker,
  leaveNotice,
  loadGroupName,
  phoneText,
  StatusLine,
  useRecord,
  type Contact,
} from './contact-shared.tsx';

type Consent = components['schemas']['ConsentEntry'];

/** What an action did, for the status line (a stamp per action, so the same words take the focus again). */
interface Status {
  text: string;
  stamp: number;
  undo?: () => void;
}

/** The page of contact `id`. */
export function ContactView(props: { api: Api; id: string }) {
  const { api, id } = props;
  const place = usePlace();
  const back = placeHref('contacts', undefined, contactListParams(place.params));
  const record = useRecord(() => api.GET('/v1/contacts/view', { params: { query: { id } } }), [api, id]);
  const [editing, setEditing] = useState(false);
  const [status, setStatus] = useState<Status | undefined>();
  const say = (text: string, undo?: () => void) => setStatus({ text, stamp: Date.now(), ...(undo ? { undo } : {}) });
  const c = record.data;
  const name = c === undefined ? `Contact ${id}` : contactName(c);

  return (
    <>
      <p>
        <a href={back}>All contacts</a>
      </p>
      <h1 class="text">{name}</h1>
      {record.status === 404 ? <p>This contact does not exist: it may have been deleted.</p> : <ErrorLine error={record.error} />}
      {status !== undefined && (
        <StatusLine text={status.text} stamp={status.stamp}>
          {status.undo !== undefined && (
            <>
              {' '}
              <button type="button" class="link" onClick={status.undo}>
                Undo
              </button>
            </>
          )}
        </StatusLine>
      )}
      {c === undefined ? (
        record.error === undefined && <p role="status">Loading…</p>
      ) : (
        <>
          {editing ? (
            <EditContact
              api={api}
              contact={c}
              onCancel={() => {
                setEditing(false);
                focusHeadingSoon();
              }}
              onSaved={(saved) => {
                setEditing(false);
                say(saved === undefined ? 'Nothing changed.' : 'Saved.');
                record.reload();
              }}
            />
          ) : (
            <section class="card" aria-label="Contact details">
              <dl class="details" data-testid="contact-details">
                <dt>Number</dt>
                <dd class="nowrap">{phoneText(c.Number)}</dd>
                <dt>First name</dt>
                <dd class="text">{c.FirstName || '—'}</dd>
                <dt>Last name</dt>
                <dd class="text">{c.LastName || '—'}</dd>
                <dt>Email</dt>
                <dd class="text">{c.Email || '—'}</dd>
                <dt>City</dt>
                <dd class="text">{c.City || '—'}</dd>
                <dt>Zip</dt>
                <dd class="text">{c.Zip || '—'}</dd>
                <dt>Birthday</dt>
                <dd>{c.BirthDay === undefined || c.BirthDay.startsWith('0000') ? '—' : c.BirthDay}</dd>
                <dt>Opt-out</dt>
                <dd data-testid="opt-out">{c.OptedOut === 1 ? 'Opted out: gets no messages' : 'Subscribed'}</dd>
                <dt>Created</dt>
                <dd>
                  <When value={c.DateCreated} />
                </dd>
                <dt>Updated</dt>
                <dd>
                  <When value={c.DateUpdated} />
                </dd>
              </dl>
              <div class="actions">
                {api.can('contacts:write') && (
                  <button type="button" onClick={() => setEditing(true)}>
                    Edit contact
                  </button>
                )}
                {api.can('sms:read') && (
                  <a class="button-link" href={placeHref('conversations', c.Number)}>
                    Conversation
                  </a>
                )}
                {api.can('contacts:write') && (
                  <ConfirmButton
                    label="Delete contact"
                    question={`Delete contact “${name}” (${phoneText(c.Number)})? Its group memberships, custom field values and consent history go with it; its messages stay in the message log. This cannot be undone.`}
                    confirm="Delete contact"
                    onConfirm={async () => {
                      try {
                        const { error, response } = await api.DELETE('/v1/contacts/delete', { params: { query: { id } } });
                        if (error !== undefined || !response.ok) return say(errorText(error, response.status));
                        leaveNotice('contacts', `Deleted contact ${name} (${phoneText(c.Number)}).`);
                        go(back);
                      } catch {
                        say('The server could not be reached.');
                      }
                    }}
                  />
                )}
                {api.can('contacts:write') && (
                  <ConfirmButton
                    label="Erase…"
                    ariaLabel={`Erase the data of “${name}”`}
                    question={`Erase everything this account holds of “${name}” (${phoneText(c.Number)})? The contact, its custom field values and group memberships are deleted. In the message log, conversations and link clicks the number becomes “erased” and every text is emptied; scheduled messages to it are cancelled and a queued one is refunded. The consent history is kept, with the number replaced by its SHA-256. This cannot be undone.`}
                    confirm="Erase"
                    onConfirm={async () => {
                      try {
                        const { error, response } = await api.call('DELETE', '/v1/contacts/erase', { query: { number: c.Number ?? '' } });
                        if (error !== undefined || !response.ok) return say(errorText(error, response.status));
                        leaveNotice('contacts', `Erased the data of ${name}.`);
                        go(back);
                      } catch {
                        say('The server could not be reached.');
                      }
                    }}
                  />
                )}
              </div>
            </section>
          )}
          {api.can('groups:read') && <ContactGroups api={api} contact={c} say={say} onChange={record.reload} />}
          {api.can('fields:read') && <ContactValues api={api} contactId={c.Id ?? 0} contactName={name} />}
          <ConsentLedger api={api} contactId={id} />
        </>
      )}
    </>
  );
}

/** The groups a contact is in: a link to each, Remove from group (with Undo), and Add to a group. */
function ContactGroups(props: { api: Api; contact: Contact; say: (text: string, undo?: () => void) => void; onChange: () => void }) {
  const { api, contact } = props;
  const writable = api.can('groups:write');
  const ids = contact.GroupIds ?? [];
  const [picked, setPicked] = useState<{ id: number; name: string } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const who = contactName(contact);

  /** groups/add-contacts or groups/remove-contacts of this contact in `group`. */
  const change = async (action: 'add-contacts' | 'remove-contacts', group: number) => {
    setError(undefined);
    const failed = await changeMembership(api, action === 'add-contacts' ? 'add' : 'remove', group, contact.Id ?? 0);
    if (failed !== undefined) {
      setError(failed);
      return false;
    }
    props.onChange();
    return true;
  };

  /** Removes the contact from group `g`, saying so with Undo (which adds it back: the same membership). */
  const remove = async (g: number) => {
    const group = (await loadGroupName(api, g)) ?? `group ${g}`;
    if (!(await change('remove-contacts', g))) return;
    props.say(`Removed ${who} from ${group}.`, () => {
      void change('add-contacts', g).then((back) => back && props.say(`${who} is in ${group} again.`));
    });
  };

  return (
    <section class="card" aria-labelledby="contact-groups-title">
      <h2 id="contact-groups-title">Groups</h2>
      {ids.length === 0 ? (
        <p>{who} is in no group.</p>
      ) : (
        <ul class="members">
          {ids.map((g) => (
            <li key={g} data-testid="contact-group">
              <span id={`contact-group-${g}`}>
                <GroupLink api={api} id={g} />
              </span>{' '}
              {writable && (
                <button type="button" class="link" aria-describedby={`contact-group-${g}`} onClick={() => void remove(g)}>
                  Remove from group
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorLine error={error} />
      {writable && (
        <form
          class="compose"
          aria-label="Add to a group"
          onSubmit={(e) => {
            e.preventDefault();
            if (picked === undefined) return setError('Choose a group first.');
            const group = picked;
            void change('add-contacts', group.id).then((done) => {
              if (!done) return;
              setPicked(undefined);
              props.say(`Added ${who} to ${group.name}.`, () => {
                void change('remove-contacts', group.id).then((back) => back && props.say(`${who} is no longer in ${group.name}.`));
              });
            });
          }}
        >
          <GroupPicker
            api={api}
            id="contact-add-group"
            value={picked === undefined ? '' : String(picked.id)}
            onChange={(id, g) => setPicked(g === undefined ? undefined : { id: Number(id), name: g.Name ?? id })}
          />
          <button type="submit">Add to group</button>
        </form>
      )}
    </section>
  );
}

/** Where a change of opt-out came from, in words (docs/API.md §14.4.2). */
function consentSource(entry: Consent): string {
  if (entry.Source === 'keyword') return `the contact texted “${entry.Detail ?? ''}”${entry.Carrier ? ` (${entry.Carrier})` : ''}`;
  if (entry.Source === 'console') return `the console (${entry.Detail ?? ''})`;
  if (entry.Source === 'import') return 'a CSV import';
  return `the API (${entry.Detail ?? ''})`;
}

/** A contact's consent ledger (contacts/consent, oldest first, paged in the URL's `consentPage`). */
function ConsentLedger(props: { api: Api; contactId: string }) {
  const list = usePagedList<Consent>(
    (page) => props.api.GET('/v1/contacts/consent', { params: { query: { id: props.contactId, page: String(page), 'per-page': '20' } } }),
    [props.api, props.contactId],
    { param: 'consentPage' },
  );
  return (
    <section class="card" aria-labelledby="consent-title" data-testid="consent">
      <h2 id="consent-title">Consent history</h2>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No change of opt-out yet.</p>
      ) : (
        <ol class="history">
          {list.rows.map((e) => (
            <li key={e.Id} data-testid="consent-entry">
              <When value={e.DateCreated} />: <strong>{e.OptedOut === 1 ? 'opted out' : 'opted back in'}</strong> by {consentSource(e)}
            </li>
          ))}
        </ol>
      )}
      <Pager list={list} noun="changes" />
    </section>
  );
}
