import { useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';

type Contact = components['schemas']['Contact'];
type ImportReport = components['schemas']['ImportReport'];
type Consent = components['schemas']['ConsentEntry'];

/**
 * Contacts (contacts/index, paged, filter `OptedOut`), a search by number (contacts/find), each
 * contact's opt-out state, an edit form (contacts/update) and the CSV import (contacts/import) with
 * its errors by line (docs/API.md §10.2, §9.13); each contact's consent ledger (contacts/consent,
 * §14.4.2). Editing and importing need `contacts:write`.
 */
export function Contacts(props: { api: Api }) {
  const writable = props.api.can('contacts:write');
  const [optedOut, setOptedOut] = useState('');
  const [search, setSearch] = useState('');
  const [found, setFound] = useState<Contact | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [editing, setEditing] = useState<number | undefined>();
  const [ledger, setLedger] = useState<number | undefined>();
  const list = usePagedList<Contact>(
    (page) =>
      props.api.GET('/v1/contacts/index', {
        params: { query: { page: String(page), 'per-page': '20', ...(optedOut === '' ? {} : { OptedOut: optedOut }) } },
      }),
    [props.api, optedOut],
  );

  async function find(event: Event) {
    event.preventDefault();
    setFound(undefined);
    if (search.trim() === '') return setError(undefined);
    await submit(
      async () => {
        const answer = await props.api.GET('/v1/contacts/find', { params: { query: { number: search.trim() } } });
        if (answer.data !== undefined) setFound(answer.data);
        return answer;
      },
      setError,
      () => undefined,
    );
  }

  const shown = found !== undefined ? [found] : list.rows;
  const reload = () => {
    setEditing(undefined);
    if (found !== undefined) void find(new Event('submit'));
    list.reload();
  };

  return (
    <>
      <h1>Contacts</h1>
      <form class="filters" aria-label="Search contacts" onSubmit={(e) => void find(e)}>
        <label>
          Number
          <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
        <label>
          Opt-out
          <select
            value={optedOut}
            onInput={(e) => {
              setFound(undefined);
              setOptedOut(e.currentTarget.value);
              list.setPage(1);
            }}
          >
            <option value="">All contacts</option>
            <option value="0">Subscribed</option>
            <option value="1">Opted out</option>
          </select>
        </label>
      </form>
      <ErrorLine error={error ?? list.error} />
      {shown === undefined ? (
        <p role="status">Loading…</p>
      ) : shown.length === 0 ? (
        <p>No contacts.</p>
      ) : (
        <ul class="cards-list">
          {shown.map((c) => (
            <li key={c.Id} class="card" data-testid="contact" data-number={c.Number}>
              <p>
                <strong>
                  {c.FirstName} {c.LastName}
                </strong>{' '}
                <span class="nowrap">+{c.Number}</span>
              </p>
              <p data-testid="opt-out">{c.OptedOut === 1 ? 'Opted out' : 'Subscribed'}</p>
              {(c.Email ?? '') !== '' && <p>{c.Email}</p>}
              {editing === c.Id ? (
                <EditContact api={props.api} contact={c} onDone={reload} />
              ) : (
                <div class="actions">
                  {writable && (
                    <button type="button" onClick={() => setEditing(c.Id)}>
                      Edit
                    </button>
                  )}
                  <button
                    type="button"
                    class="secondary"
                    aria-expanded={ledger === c.Id}
                    onClick={() => setLedger(ledger === c.Id ? undefined : c.Id)}
                  >
                    {ledger === c.Id ? 'Hide consent history' : 'Consent history'}
                  </button>
                </div>
              )}
              {ledger === c.Id && <ConsentLedger api={props.api} contactId={String(c.Id)} />}
            </li>
          ))}
        </ul>
      )}
      {found === undefined && <Pager list={list} noun="contacts" />}
      {writable && <ImportContacts api={props.api} onDone={list.reload} />}
    </>
  );
}

/** Where a change of opt-out came from, in words (docs/API.md §14.4.2). */
function consentSource(entry: Consent): string {
  if (entry.Source === 'keyword') return `the contact texted “${entry.Detail ?? ''}”${entry.Carrier ? ` (${entry.Carrier})` : ''}`;
  if (entry.Source === 'console') return `the console (${entry.Detail ?? ''})`;
  if (entry.Source === 'import') return 'a CSV import';
  return `the API (${entry.Detail ?? ''})`;
}

/** A contact's consent ledger (contacts/consent, oldest first, paged): every change of its opt-out and where it came from. */
function ConsentLedger(props: { api: MsgsvcClient; contactId: string }) {
  const list = usePagedList<Consent>(
    (page) => props.api.GET('/v1/contacts/consent', { params: { query: { id: props.contactId, page: String(page), 'per-page': '20' } } }),
    [props.api, props.contactId],
  );
  return (
    <section aria-label={`Consent history of contact ${props.contactId}`} data-testid="consent">
      <h2>Consent history</h2>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No change of opt-out yet.</p>
      ) : (
        <ol class="history">
          {list.rows.map((e) => (
            <li key={e.Id} data-testid="consent-entry">
              {e.DateCreated}: <strong>{e.OptedOut === 1 ? 'opted out' : 'opted back in'}</strong> by {consentSource(e)}
            </li>
          ))}
        </ol>
      )}
      <Pager list={list} noun="changes" />
    </section>
  );
}

/** Edits a contact's names, email and city, or opts it out (docs/API.md §10.2: an opt-out cannot be cleared here). */
function EditContact(props: { api: MsgsvcClient; contact: Contact; onDone: () => void }) {
  const c = props.contact;
  const [fields, setFields] = useState({
    FirstName: c.FirstName ?? '',
    LastName: c.LastName ?? '',
    Email: c.Email ?? '',
    City: c.City ?? '',
  });
  const [optOut, setOptOut] = useState(c.OptedOut === 1);
  const [error, setError] = useState<string | undefined>();
  const id = String(c.Id);
  const input = (key: keyof typeof fields, label: string) => (
    <>
      <label for={`contact-${key}-${id}`}>{label}</label>
      <input id={`contact-${key}-${id}`} value={fields[key]} onInput={(e) => setFields({ ...fields, [key]: e.currentTarget.value })} />
    </>
  );
  return (
    <form
      class="compose"
      aria-label={`Edit contact ${id}`}
      onSubmit={(e) => {
        e.preventDefault();
        void submit(
          () =>
            props.api.PUT('/v1/contacts/update', {
              params: { query: { id } },
              body: { ...fields, ...(optOut && c.OptedOut !== 1 ? { OptedOut: 1 } : {}) },
            }),
          setError,
          props.onDone,
        );
      }}
    >
      {input('FirstName', 'First name')}
      {input('LastName', 'Last name')}
      {input('Email', 'Email')}
      {input('City', 'City')}
      <label class="check">
        <input type="checkbox" checked={optOut} disabled={c.OptedOut === 1} onInput={(e) => setOptOut(e.currentTarget.checked)} />
        Opted out {c.OptedOut === 1 && '(only the contact can undo it, by texting START)'}
      </label>
      <ErrorLine error={error} />
      <div class="actions">
        <button type="submit">Save</button>
        <button type="button" class="secondary" onClick={props.onDone}>
          Close
        </button>
      </div>
    </form>
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
      <p class="hint">The first line names the columns: Number (required), FirstName, LastName, Email, …</p>
      <label for="import-file">CSV file</label>
      <input id="import-file" type="file" accept=".csv,text/csv" onInput={(e) => setFile(e.currentTarget.files?.[0])} />
      <button type="submit" disabled={busy}>
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
