import { useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { go, placeHref, usePlace, useUrlFilters } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import {
  contactListParams,
  contactName,
  GroupLink,
  GroupPicker,
  phoneText,
  searchContacts,
  StatusLine,
  takeNotice,
  type Contact,
} from './contact-shared.tsx';
import { CreateContact } from './contact-form.tsx';
import { ContactView } from './contact-view.tsx';
import { useDraft } from './ui.tsx';

type ImportReport = components['schemas']['ImportReport'];

/**
 * Contacts (docs/API.md §10.2): the list (`#/contacts`: contacts/index, paged, searched on the
 * server with `Search` and filtered by `OptedOut` and `GroupId`, all kept in the URL), a form to add
 * one (contacts/create), the CSV import (contacts/import) with its errors by line; and one contact
 * (`#/contacts/<id>`, contact-view.tsx). Changes need `contacts:write`.
 */
export function Contacts(props: { api: Api }) {
  const place = usePlace();
  if (place.id !== undefined) return <ContactView api={props.api} id={place.id} />;
  return <ContactList api={props.api} />;
}

/** The list of contacts with its filters, the form to add one and the import. */
function ContactList(props: { api: Api }) {
  const { api } = props;
  const writable = api.can('contacts:write');
  const place = usePlace();
  const filters = useUrlFilters(['Search', 'OptedOut', 'GroupId'] as const);
  const { Search, OptedOut, GroupId } = filters.applied;
  // Back, Forward or a link changed the filters: the form shows them.
  const [draft, setDraft] = useDraft(filters.applied, `${Search}\n${OptedOut}\n${GroupId}`);
  const [notice] = useState(() => takeNotice('contacts'));
  const list = usePagedList<Contact>(
    (page) =>
      searchContacts(api, Search, {
        page: String(page),
        ...(OptedOut === '' ? {} : { OptedOut }),
        ...(GroupId === '' ? {} : { GroupId }),
      }),
    [api, Search, OptedOut, GroupId],
  );
  const listParams = contactListParams(place.params);

  return (
    <>
      <h1>Contacts</h1>
      <StatusLine text={notice} focus={false} />
      <form
        class="filters"
        aria-label="Search contacts"
        onSubmit={(e) => {
          e.preventDefault();
          filters.apply(draft);
        }}
      >
        <div>
          <label for="contacts-search">Search (name, email or number)</label>
          <input
            id="contacts-search"
            type="search"
            value={draft.Search}
            onInput={(e) => setDraft({ ...draft, Search: e.currentTarget.value })}
            autoComplete="off"
          />
        </div>
        <div>
          <label for="contacts-opted-out">Opt-out</label>
          <select id="contacts-opted-out" value={draft.OptedOut} onInput={(e) => setDraft({ ...draft, OptedOut: e.currentTarget.value })}>
            <option value="">All contacts</option>
            <option value="0">Subscribed</option>
            <option value="1">Opted out</option>
          </select>
        </div>
        {api.can('groups:read') && (
          <details class="wide" open={draft.GroupId !== ''}>
            <summary>Only the members of a group</summary>
            <GroupPicker
              api={api}
              id="contacts-group"
              label="Group"
              value={draft.GroupId}
              onChange={(id) => setDraft({ ...draft, GroupId: id })}
            />
            {draft.GroupId !== '' && (
              <button type="button" class="link" onClick={() => setDraft({ ...draft, GroupId: '' })}>
                Any group
              </button>
            )}
          </details>
        )}
        <div class="actions wide">
          <button type="submit">Search</button>
          {(Search !== '' || OptedOut !== '' || GroupId !== '') && (
            <button type="button" class="secondary" onClick={() => filters.apply({ Search: '', OptedOut: '', GroupId: '' })}>
              Show all contacts
            </button>
          )}
        </div>
      </form>
      {GroupId !== '' && (
        <p>
          Members of group <GroupLink api={api} id={Number(GroupId)} /> only.
        </p>
      )}
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>{Search !== '' || OptedOut !== '' || GroupId !== '' ? 'No contact matches.' : 'No contacts yet.'}</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((c) => (
            <li key={c.Id} class="card" data-testid="contact" data-number={c.Number}>
              <p>
                <a href={placeHref('contacts', c.Id, listParams)}>
                  <strong class="text">{contactName(c)}</strong>
                </a>{' '}
                {contactName(c) !== phoneText(c.Number) && <span class="nowrap">{phoneText(c.Number)}</span>}
              </p>
              <p data-testid="opt-out">{c.OptedOut === 1 ? 'Opted out' : 'Subscribed'}</p>
              {((c.Email ?? '') !== '' || (c.City ?? '') !== '') && (
                <p class="text">{[c.Email, c.City].filter((v) => (v ?? '') !== '').join(' · ')}</p>
              )}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="contacts" />
      {writable && <CreateContact api={api} onCreated={(created) => go(placeHref('contacts', created.Id, listParams))} />}
      {writable && <ImportContacts api={api} onDone={list.reload} />}
    </>
  );
}

/** The CSV import (contacts/import): a file, a progress bar while it runs, then the report with each failed line. */
function ImportContacts(props: { api: MsgsvcClient; onDone: () => void }) {
  const [file, setFile] = useState<File | undefined>();
  const [busy, setBusy] = useState(false);
  const [report, setReport] = useState<ImportReport | undefined>();
  const [error, setError] = useState<string | undefined>();

  async function run(event: Event) {
    event.preventDefault();
    if (busy) return;
    if (file === undefined) return setError('Choose a CSV file.');
    setBusy(true);
    setError(undefined);
    setReport(undefined);
    try {
      const csv = await file.text();
      const { data, error, response } = await props.api.POST('/v1/contacts/import', {
        body: csv,
        bodySerializer: (body: string) => body,
        headers: { 'Content-Type': 'text/csv' },
      });
      if (error !== undefined) return setError(errorText(error, response.status));
      setReport(data);
      props.onDone();
    } catch {
      setError('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="compose card" aria-label="Import contacts" onSubmit={(e) => void run(e)}>
      <h2>Import contacts from CSV</h2>
      <p class="hint">
        The first line names the columns: Number (required), FirstName, LastName, Email, City, Zip, BirthDay, OptedOut, GroupIds (ids
        separated by ;) and any custom field by its name. A known number is updated, a new one added.
      </p>
      <label for="import-file">CSV file</label>
      <input id="import-file" type="file" accept=".csv,text/csv" onInput={(e) => setFile(e.currentTarget.files?.[0])} />
      <button type="submit" aria-disabled={busy ? 'true' : undefined}>
        {busy ? 'Importing…' : 'Import'}
      </button>
      {busy && <progress aria-label="Importing contacts" />}
      <ErrorLine error={error} />
      {report !== undefined && (
        <div role="status" data-testid="import-report">
          <p>
            {report.Created} created, {report.Updated} updated, {report.Failed} failed.
          </p>
          {(report.Errors ?? []).length > 0 && (
            <ul>
              {(report.Errors ?? []).map((e) => (
                <li key={`${e.Line}-${e.Field}`} data-line={e.Line}>
                  Line {e.Line}: {e.Message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </form>
  );
}
