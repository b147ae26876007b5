/**
 * What the contacts, groups and custom fields pages share: a record loaded by id, every page of a
 * short list, a contact's name in words, a status line that can take the focus, and the pickers of
 * contacts and groups that search on the server (contacts/index and groups/index `Search`).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { components } from '../../../clients/typescript/src/index.ts';
import { errorText, pagination, type Answer, type Api } from '../api.ts';
import type { PageAnswer } from './list.tsx';
import { SearchPicker } from './picker.tsx';

export type Contact = components['schemas']['Contact'];
export type Group = components['schemas']['Group'];

/** A contact in words: its name, or its number when it has none. */
export function contactName(c: Contact): string {
  const name = `${c.FirstName ?? ''} ${c.LastName ?? ''}`.trim();
  return name === '' ? phoneText(c.Number) : name;
}

/** A stored number (E.164 digits, docs/API.md §1.7) as people write it: `+15551234567`. */
export function phoneText(number: string | undefined): string {
  return number === undefined || number === '' ? '' : `+${number}`;
}

/** "1 member", "3 members". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

/** One record (a `view` operation): undefined while loading, its error line, and reload. */
export interface LoadedRecord<T> {
  data: T | undefined;
  error: string | undefined;
  /** The answer's status (404 when the record is gone). */
  status: number;
  reload: () => void;
}

/** Loads a record with `load`, again when `deps` change or `reload()` is called. */
export function useRecord<T>(load: () => Promise<Answer<T>>, deps: readonly unknown[]): LoadedRecord<T> {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [status, setStatus] = useState(0);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load()
      .then(({ data, error, response }) => {
        if (!live) return;
        setStatus(response.status);
        if (error !== undefined || data === undefined) {
          setData(undefined);
          return setError(errorText(error, response.status));
        }
        setError(undefined);
        setData(data);
      })
      .catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [tick, ...deps]);
  return { data, error, status, reload: () => setTick((n) => n + 1) };
}

/**
 * Every record of a short list (keywords, a contact's custom field values), page after page of
 * 100 (docs/API.md §5), at most `maxPages` pages; `complete` is false when more were left.
 */
export async function loadAll<T>(
  load: (page: number) => Promise<PageAnswer<T>>,
  maxPages = 20,
): Promise<{ rows: T[]; total: number; complete: boolean }> {
  const rows: T[] = [];
  let total = 0;
  for (let page = 1; page <= maxPages; page++) {
    const { data, error, response } = await load(page);
    if (error !== undefined || data === undefined) throw new Error(errorText(error, response.status));
    rows.push(...data);
    const pages = pagination(response);
    total = pages.total;
    if (page >= pages.pages) return { rows, total, complete: true };
  }
  return { rows, total, complete: rows.length >= total };
}

/**
 * A status line (what an action did) that takes the focus when it changes, so that the focus is
 * never left on <body> after the control that had it went away (a delete, a remove, a save that
 * closed its form). Its children may hold a button (Undo).
 */
export function StatusLine(props: {
  text: string | undefined;
  children?: ComponentChildren;
  /** False: announce only, leave the focus where it is. */
  focus?: boolean;
  /** Changes with each action, so that the same text after a second action takes the focus again. */
  stamp?: number;
}) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (props.text !== undefined && props.focus !== false) ref.current?.focus();
  }, [props.text, props.stamp]);
  if (props.text === undefined) return null;
  return (
    <p class="status-line" role="status" tabIndex={-1} ref={ref} data-testid="status">
      <span>{props.text}</span>
      {props.children}
    </p>
  );
}

/** The contact list's params in the URL: its page and filters (a contact's page keeps them, for the way back). */
const CONTACT_LIST_PARAMS = ['page', 'Search', 'OptedOut', 'GroupId'] as const;

/** The contact list's params of the current place, without those of a contact's own lists. */
export function contactListParams(params: URLSearchParams): Record<string, string | undefined> {
  return Object.fromEntries(CONTACT_LIST_PARAMS.map((k) => [k, params.get(k) ?? undefined]));
}

/** A line for the next page to show once (a list after one of its records was deleted there). */
const notices = new Map<string, string>();

/** Leaves `text` for page `page` (`contacts`, `groups`) to show once. */
export function leaveNotice(page: string, text: string): void {
  notices.set(page, text);
}

/** The line left for `page`, once. */
export function takeNotice(page: string): string | undefined {
  const text = notices.get(page);
  notices.delete(page);
  return text;
}

/** contacts/index with msgsvc's `Search` (names, email, number digits), which the typed client does not list yet. */
export function searchContacts(api: Api, text: string, query: Record<string, string> = {}): Promise<PageAnswer<Contact>> {
  return api.call<Contact[]>('GET', '/v1/contacts/index', {
    query: { 'per-page': '20', ...query, ...(text === '' ? {} : { Search: text }) },
  });
}

/** groups/index with msgsvc's `Search` (the name). */
export function searchGroups(api: Api, text: string, query: Record<string, string> = {}): Promise<PageAnswer<Group>> {
  return api.call<Group[]>('GET', '/v1/groups/index', { query: { 'per-page': '20', ...query, ...(text === '' ? {} : { Search: text }) } });
}

/** A contact chosen from a server search (SearchPicker): its id as the value. */
export function ContactPicker(props: {
  api: Api;
  value: string;
  onChange: (id: string, contact: Contact | undefined) => void;
  id?: string;
}) {
  return (
    <SearchPicker<Contact>
      label="Contact"
      noun="contacts"
      id={props.id}
      search={(text) => searchContacts(props.api, text)}
      option={(c) => ({
        value: String(c.Id),
        label: `${contactName(c)}${contactName(c) === phoneText(c.Number) ? '' : ` · ${phoneText(c.Number)}`}`,
      })}
      value={props.value}
      onChange={props.onChange}
    />
  );
}

/** A group chosen from a server search (SearchPicker): its id as the value. */
export function GroupPicker(props: {
  api: Api;
  label?: string;
  value: string;
  onChange: (id: string, group: Group | undefined) => void;
  id?: string;
}) {
  return (
    <SearchPicker<Group>
      label={props.label ?? 'Group'}
      noun="groups"
      id={props.id}
      search={(text) => searchGroups(props.api, text)}
      option={(g) => ({ value: String(g.Id), label: g.Name ?? `Group ${g.Id}` })}
      value={props.value}
      onChange={props.onChange}
    />
  );
}

/** Group names by id, asked once per page load (groups/view) for the links to groups off the current page. */
const groupNames = new Map<number, Promise<string | undefined>>();

/** Forgets a group's name (after a rename or a delete). */
export function forgetGroupName(id: number): void {
  groupNames.delete(id);
}

/** Group `id`'s name, asked once per page load (groups/view); undefined when it cannot be read. */
export function loadGroupName(api: Api, id: number): Promise<string | undefined> {
  let known = groupNames.get(id);
  if (known === undefined) {
    known = api
      .GET('/v1/groups/view', { params: { query: { id: String(id) } } })
      .then(({ data }) => data?.Name)
      .catch(() => undefined);
    groupNames.set(id, known);
  }
  return known;
}

/** A link to group `id` with its name (loaded when not known). */
export function GroupLink(props: { api: Api; id: number; name?: string }) {
  const [name, setName] = useState(props.name);
  useEffect(() => {
    if (props.name !== undefined) return setName(props.name);
    let live = true;
    void loadGroupName(props.api, props.id).then((n) => live && setName(n));
    return () => {
      live = false;
    };
  }, [props.id, props.name]);
  return <a href={`#/groups/${props.id}`}>{name ?? `Group ${props.id}`}</a>;
}

/**
 * Adds contact `contactId` to group `groupId` or removes it (groups/add-contacts,
 * groups/remove-contacts): undefined when done, else the line to show (the API's message, or
 * "could not be reached").
 */
export async function changeMembership(
  api: Api,
  action: 'add' | 'remove',
  groupId: number,
  contactId: number,
): Promise<string | undefined> {
  try {
    const path = action === 'add' ? '/v1/groups/add-contacts' : '/v1/groups/remove-contacts';
    const { error, response } = await api.POST(path, {
      params: { query: { id: String(groupId) } },
      body: { PhoneNumberIds: [contactId] },
    });
    return error !== undefined || !response.ok ? errorText(error, response.status) : undefined;
  } catch {
    return 'The server could not be reached.';
  }
}
