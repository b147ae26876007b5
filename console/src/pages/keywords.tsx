import { useEffect, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { placeHref, setPlace, usePlace } from '../route.ts';
import { ErrorLine, Pager, usePagedList, type PageAnswer } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { SearchPicker } from './picker.tsx';
import { ConfirmButton } from './ui.tsx';
import { Notice, useEveryPage, useNotice } from './template-kit.tsx';

type Keyword = components['schemas']['KeywordReservation'];
type Inbound = components['schemas']['Message'];
type Group = components['schemas']['Group'];

/** The account's numbers (numbers/index, first page of 100), for the keyword and inbound forms. */
function useNumbers(api: MsgsvcClient): string[] {
  const [numbers, setNumbers] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    api
      .GET('/v1/numbers/index', { params: { query: { 'per-page': '100' } } })
      .then(({ data }) => live && data !== undefined && setNumbers(data.map((n) => String(n.Number))))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [api]);
  return numbers;
}

/** What the API's messages on a keyword's fields mean here (docs/API.md §10.5); `keyword` is the one sent, for the "taken" message. */
function keywordHelp(keyword: string): FieldHelp {
  const taken =
    'Someone already holds this keyword on this number (in this account or another one sharing the number), written in any case ' +
    'and spacing: choose another keyword or another number.';
  return {
    Keyword: {
      'Keyword cannot be blank.': 'Type the word, or words, people will text, e.g. JOIN or JOIN NOW.',
      'Keyword should contain at least 4 characters.': 'A keyword has at least 4 characters (a space between words counts).',
      'Keyword should contain at most 255 characters.': 'A keyword has at most 255 characters.',
      'Keyword is invalid.':
        "STOP, START, HELP, UNSTOP, CANCEL, END, QUIT, UNSUBSCRIBE, STOPALL and INFO are the carriers' words for opting out and help: choose another keyword.",
      [`Keyword "${keyword}" has already been taken.`]: taken,
      [`Keyword "${keyword.trim()}" has already been taken.`]: taken,
    },
    Number: {
      'Number cannot be blank.': 'Choose the number people will text.',
      'Number is invalid.': 'Choose one of the Active numbers of this account.',
    },
    AutoreplyMessage: {
      'Autoreply Message should contain at most 1,600 characters.': 'Shorten the reply to 1,600 characters at most (ten SMS segments).',
    },
  };
}

const KEYWORD_FIELDS = ['Keyword', 'Number', 'AutoreplyMessage'];

/** The groups a keyword feeds: whoever texts it joins them (Group `KeywordId`, docs/API.md §9.5, §11.5). */
function fedBy(groups: Group[] | undefined, keywordId: number | undefined): Group[] | undefined {
  return groups?.filter((g) => g.KeywordId === keywordId && keywordId !== undefined);
}

function members(g: Group): string {
  const n = (g.PhoneNumberIds ?? []).length;
  return `${n} ${n === 1 ? 'member' : 'members'}`;
}

/** "Feeds Club (3 members), …" with links to the groups, or that it feeds none. */
function FedGroups(props: { groups: Group[] | undefined; complete: boolean }) {
  if (props.groups === undefined) return null;
  return (
    <p data-testid="keyword-groups">
      {props.groups.length === 0 ? (
        'Feeds no group: texting it joins no one.'
      ) : (
        <>
          Feeds{' '}
          {props.groups.map((g, i) => (
            <span key={g.Id}>
              {i > 0 && ', '}
              <a href={placeHref('groups', g.Id)} class="text">
                {g.Name}
              </a>{' '}
              ({members(g)})
            </span>
          ))}
          : whoever texts it joins {props.groups.length === 1 ? 'it' : 'them'}.
        </>
      )}
      {!props.complete && ' (Only the first 5,000 groups were read.)'}
    </p>
  );
}

/** The question of Release: the keyword, its number, and what stops. */
function releaseQuestion(k: Keyword, fed: Group[] | undefined): string {
  const groups =
    fed === undefined
      ? 'The groups it feeds stop getting new members from it.'
      : fed.length === 0
        ? 'It feeds no group.'
        : `The groups it feeds (${fed.map((g) => g.Name ?? '').join(', ')}) stop getting new members from it; their members stay.`;
  return `Release “${k.Keyword ?? ''}” on ${k.Number ?? ''}? ${groups} Texts of it become ordinary inbound texts, and any account may then reserve it on that number.`;
}

/**
 * Keywords (docs/API.md §10.5, §11.5): the reservations (keyword/index, paged), each with the groups
 * it feeds, reserve one (keyword/reserve; several words are one keyword, `JOIN NOW`), release one
 * (keyword/delete, asked first); a keyword opens at `#/keywords/<id>`: edited (keyword/update), its
 * groups linked and unlinked (groups/update `KeywordId`). While the sandbox is the carrier, a box
 * sends an inbound text (sandbox/inbound, §11.3): STOP opts its sender out, a keyword makes them
 * join its groups. Reserving and the sandbox need `sms:write` (keyword/reserve is an `sms`
 * operation), editing and releasing `keywords:write`.
 */
export function Keywords(props: { api: Api }) {
  const { api } = props;
  const place = usePlace();
  const numbers = useNumbers(api);
  const { notice, say } = useNotice();
  const [groupsTick, setGroupsTick] = useState(0);
  const allGroups = useEveryPage<Group>(
    (page) =>
      api.can('groups:read')
        ? api.GET('/v1/groups/index', { params: { query: { page: String(page), 'per-page': '100' } } })
        : Promise.reject(new Error('no groups:read')),
    [api, groupsTick],
  );
  const reloadGroups = () => setGroupsTick((n) => n + 1);
  if (place.id !== undefined)
    return (
      <KeywordView
        api={api}
        id={place.id}
        numbers={numbers}
        groups={allGroups}
        reloadGroups={reloadGroups}
        onReleased={(text) => {
          say(text);
          setPlace({}, { id: null });
        }}
      />
    );
  return <KeywordList api={api} numbers={numbers} groups={allGroups} reloadGroups={reloadGroups} notice={notice} say={say} />;
}

interface GroupsState {
  groups: { rows: Group[]; complete: boolean } | undefined;
  reloadGroups: () => void;
}

function KeywordList(
  props: GroupsState & { api: Api; numbers: string[]; notice: ReturnType<typeof useNotice>['notice']; say: (text: string) => void },
) {
  const { api, say } = props;
  const canReserve = api.can('sms:write');
  const canRelease = api.can('keywords:write');
  const list = usePagedList<Keyword>(
    // JSON is asked for, so the records are in their JSON form (the schema also allows the XML one).
    (page) =>
      api
        .GET('/v1/keyword/index', { params: { query: { page: String(page), 'per-page': '20' } } })
        .then((answer) => answer as PageAnswer<Keyword>),
    [api],
  );

  async function release(k: Keyword) {
    try {
      const { error, response } = await api.DELETE('/v1/keyword/delete', { params: { query: { id: String(k.Id) } } });
      if (error !== undefined || !response.ok) return say(errorText(error, response.status));
      say(`Released “${k.Keyword ?? ''}” on ${k.Number ?? ''}.`);
      list.reload();
      props.reloadGroups();
    } catch {
      say('The server could not be reached.');
    }
  }

  return (
    <>
      <h1>Keywords</h1>
      <Notice notice={props.notice} />
      {canReserve && (
        <ReserveKeyword
          api={api}
          numbers={props.numbers}
          onDone={(text) => {
            say(text);
            list.reload();
          }}
        />
      )}
      <h2>Your keywords</h2>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No keywords.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((k) => {
            const fed = fedBy(props.groups?.rows, k.Id);
            return (
              <li key={k.Id} class="card" data-testid="keyword" data-id={k.Id}>
                <p>
                  <a href={placeHref('keywords', k.Id)} class="text">
                    <strong>{k.Keyword}</strong>
                  </a>{' '}
                  on {k.Number}
                </p>
                {(k.AutoreplyMessage ?? '') !== '' && <p class="text">Reply: {k.AutoreplyMessage}</p>}
                <FedGroups groups={fed} complete={props.groups?.complete ?? true} />
                {canRelease && (
                  <div class="actions">
                    <ConfirmButton
                      label="Release"
                      ariaLabel={`Release ${k.Keyword ?? ''}`}
                      question={releaseQuestion(k, fed)}
                      confirm="Release keyword"
                      onConfirm={() => release(k)}
                    />
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <Pager list={list} noun="keywords" />
      {canReserve && (
        <SandboxInbound
          api={api}
          numbers={props.numbers}
          groups={props.groups?.rows}
          onReceived={() => {
            list.reload();
            props.reloadGroups();
          }}
        />
      )}
    </>
  );
}

/** Reserves a keyword (keyword/reserve), its errors by field. */
function ReserveKeyword(props: { api: Api; numbers: string[]; onDone: (text: string) => void }) {
  const [keyword, setKeyword] = useState('');
  const [number, setNumber] = useState('');
  const [reply, setReply] = useState('');
  const form = useFormErrors(KEYWORD_FIELDS, keywordHelp(keyword));
  const chosen = number || props.numbers[0] || '';
  return (
    <form
      class="compose card"
      aria-label="Reserve a keyword"
      onSubmit={(e) => {
        e.preventDefault();
        void submitForm(
          () => props.api.POST('/v1/keyword/reserve', { body: { Keyword: keyword, Number: chosen, AutoreplyMessage: reply } }),
          form,
          () => {
            props.onDone(`Reserved “${keyword.trim()}” on ${chosen}.`);
            setKeyword('');
            setReply('');
          },
        );
      }}
    >
      <h2>Reserve a keyword</h2>
      <KeywordFields
        prefix="keyword"
        form={form}
        numbers={props.numbers}
        keyword={keyword}
        number={chosen}
        reply={reply}
        setKeyword={setKeyword}
        setNumber={setNumber}
        setReply={setReply}
      />
      <GeneralError form={form} />
      <button type="submit">Reserve</button>
    </form>
  );
}

/** The three fields of a keyword (reserve and update). */
function KeywordFields(props: {
  prefix: string;
  form: ReturnType<typeof useFormErrors>;
  numbers: string[];
  keyword: string;
  number: string;
  reply: string;
  setKeyword: (v: string) => void;
  setNumber: (v: string) => void;
  setReply: (v: string) => void;
}) {
  const { prefix, form } = props;
  const numbers = props.numbers.includes(props.number) || props.number === '' ? props.numbers : [props.number, ...props.numbers];
  return (
    <>
      <label for={prefix}>Keyword</label>
      <input
        id={prefix}
        value={props.keyword}
        autoComplete="off"
        aria-describedby={form.of('Keyword') ? `${prefix}-error` : `${prefix}-hint`}
        aria-invalid={form.of('Keyword') ? 'true' : undefined}
        onInput={(e) => props.setKeyword(e.currentTarget.value)}
      />
      <p class="hint" id={`${prefix}-hint`}>
        One word or several (JOIN NOW): a text that starts with it, in any case and spacing, matches.
      </p>
      <FieldMessage form={form} field="Keyword" id={prefix} />
      <label for={`${prefix}-number`}>On number</label>
      <select
        id={`${prefix}-number`}
        value={props.number}
        onInput={(e) => props.setNumber(e.currentTarget.value)}
        {...form.aria('Number', `${prefix}-number`)}
      >
        {numbers.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <FieldMessage form={form} field="Number" id={`${prefix}-number`} />
      <label for={`${prefix}-reply`}>Automatic reply (optional)</label>
      <textarea
        id={`${prefix}-reply`}
        rows={2}
        value={props.reply}
        onInput={(e) => props.setReply(e.currentTarget.value)}
        {...form.aria('AutoreplyMessage', `${prefix}-reply`)}
      />
      <FieldMessage form={form} field="AutoreplyMessage" id={`${prefix}-reply`} />
    </>
  );
}

/** One keyword (`#/keywords/<id>`): edit it, the groups it feeds (link, unlink), release it. */
function KeywordView(props: GroupsState & { api: Api; id: string; numbers: string[]; onReleased: (text: string) => void }) {
  const { api, id } = props;
  const [k, setK] = useState<Keyword | undefined>();
  const [error, setError] = useState<string | undefined>();
  const { notice, say } = useNotice();
  const canEdit = api.can('keywords:write');
  const canLink = api.can('groups:write');
  useEffect(() => {
    let live = true;
    api
      .GET('/v1/keyword/view', { params: { query: { id } } })
      .then(({ data, error, response }) => {
        if (!live) return;
        if (response.status === 404) return setError('There is no such keyword: it was released, or belongs to another account.');
        if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
        setK(data as Keyword);
      })
      .catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [api, id]);
  const fed = fedBy(props.groups?.rows, k?.Id);

  async function release(record: Keyword) {
    try {
      const { error, response } = await api.DELETE('/v1/keyword/delete', { params: { query: { id } } });
      if (error !== undefined || !response.ok) return say(errorText(error, response.status));
      props.reloadGroups();
      props.onReleased(`Released “${record.Keyword ?? ''}” on ${record.Number ?? ''}.`);
    } catch {
      say('The server could not be reached.');
    }
  }

  async function link(group: Group, keywordId: number, done: string) {
    try {
      const { error, response } = await api.PUT('/v1/groups/update', {
        params: { query: { id: String(group.Id) } },
        body: { fname: group.Name ?? '', KeywordId: keywordId },
      });
      if (error !== undefined || !response.ok) return say(errorText(error, response.status));
      say(done);
      props.reloadGroups();
    } catch {
      say('The server could not be reached.');
    }
  }

  return (
    <>
      <h1>Keyword {k?.Keyword ?? id}</h1>
      <p>
        <a href={placeHref('keywords')}>All keywords</a>
      </p>
      <Notice notice={notice} />
      <ErrorLine error={error} />
      {k === undefined ? (
        error === undefined && <p role="status">Loading…</p>
      ) : (
        <>
          <section class="card" aria-labelledby="keyword-groups-title">
            <h2 id="keyword-groups-title">Groups it feeds</h2>
            <FedGroups groups={fed} complete={props.groups?.complete ?? true} />
            {canLink && fed !== undefined && fed.length > 0 && (
              <ul class="cards-list">
                {fed.map((g) => (
                  <li key={g.Id}>
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => void link(g, 0, `${g.Name ?? ''} no longer gets members from “${k.Keyword ?? ''}”.`)}
                    >
                      Unlink {g.Name}
                    </button>
                  </li>
                ))}
              </ul>
            )}
            {canLink && (
              <LinkGroup api={api} onLink={(g) => void link(g, k.Id ?? 0, `${g.Name ?? ''} now gets members from “${k.Keyword ?? ''}”.`)} />
            )}
          </section>
          {canEdit && (
            <EditKeyword
              api={api}
              keyword={k}
              numbers={props.numbers}
              onStart={() => say(undefined)}
              onSaved={(saved) => {
                setK(saved);
                say('Saved.');
              }}
            />
          )}
          {canEdit && (
            <div class="actions">
              <ConfirmButton
                label="Release"
                ariaLabel={`Release ${k.Keyword ?? ''}`}
                question={releaseQuestion(k, fed)}
                confirm="Release keyword"
                onConfirm={() => release(k)}
              />
            </div>
          )}
        </>
      )}
    </>
  );
}

/** A group picker (groups/index `Search`) and a button that makes the chosen group one this keyword feeds. */
function LinkGroup(props: { api: Api; onLink: (group: Group) => void }) {
  const [chosen, setChosen] = useState<Group | undefined>();
  return (
    <div class="compose" role="group" aria-labelledby="link-group-title">
      <h3 id="link-group-title">Link a group</h3>
      <p class="hint">A group is fed by one keyword at most: linking a group moves it here from the keyword it had.</p>
      <SearchPicker<Group>
        label="Group"
        noun="groups"
        id="link-group"
        search={(text) =>
          props.api.call<Group[]>('GET', '/v1/groups/index', { query: { 'per-page': '20', ...(text === '' ? {} : { Search: text }) } })
        }
        option={(g) => ({ value: String(g.Id), label: g.Name ?? `Group ${g.Id}` })}
        value={chosen === undefined ? '' : String(chosen.Id)}
        onChange={(_value, row) => setChosen(row)}
      />
      <button type="button" disabled={chosen === undefined} onClick={() => chosen !== undefined && props.onLink(chosen)}>
        Link {chosen?.Name ?? 'the group'}
      </button>
    </div>
  );
}

/** Changes a keyword (keyword/update: Keyword, Number, AutoreplyMessage). */
function EditKeyword(props: { api: Api; keyword: Keyword; numbers: string[]; onStart: () => void; onSaved: (k: Keyword) => void }) {
  const [keyword, setKeyword] = useState(props.keyword.Keyword ?? '');
  const [number, setNumber] = useState(String(props.keyword.Number ?? ''));
  const [reply, setReply] = useState(props.keyword.AutoreplyMessage ?? '');
  const form = useFormErrors(KEYWORD_FIELDS, keywordHelp(keyword));
  return (
    <form
      class="compose card"
      aria-label="Edit the keyword"
      onSubmit={(e) => {
        e.preventDefault();
        props.onStart();
        void submitForm(
          () =>
            props.api.PUT('/v1/keyword/update', {
              params: { query: { id: String(props.keyword.Id) } },
              body: { Keyword: keyword, Number: number, AutoreplyMessage: reply },
            }),
          form,
          (data) => data !== undefined && props.onSaved(data as Keyword),
        );
      }}
    >
      <h2>Edit</h2>
      <KeywordFields
        prefix="edit-keyword"
        form={form}
        numbers={props.numbers}
        keyword={keyword}
        number={number}
        reply={reply}
        setKeyword={setKeyword}
        setNumber={setNumber}
        setReply={setReply}
      />
      <GeneralError form={form} />
      <button type="submit">Save changes</button>
    </form>
  );
}

/** The sandbox's inbound box (sandbox/inbound): a text from a number to one of the account's numbers, and what it did. */
function SandboxInbound(props: { api: Api; numbers: string[]; groups: Group[] | undefined; onReceived: () => void }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [result, setResult] = useState<string | undefined>();
  const chosen = to || props.numbers[0] || '';

  /** The groups of the sender's contact, after the text (contacts/find). */
  async function senderGroups(): Promise<string> {
    if (!props.api.can('contacts:read')) return '';
    const { data: contact } = await props.api.GET('/v1/contacts/find', { params: { query: { number: from.trim() } } });
    if (contact === undefined) return '';
    const ids = contact.GroupIds ?? [];
    if (ids.length === 0) return ' The sender is in no group.';
    const name = (id: number) => props.groups?.find((g) => g.Id === id)?.Name ?? `group ${id}`;
    return ` The sender is now a member of: ${ids.map(name).join(', ')}.`;
  }

  async function send(event: Event) {
    event.preventDefault();
    setError(undefined);
    setResult(undefined);
    try {
      const { data, error, response } = await props.api.POST('/v1/sandbox/inbound', { body: { From: from, To: chosen, Message: text } });
      if (response.status === 404) return setError('The sandbox is not the carrier of this server: inbound texts come from the carrier.');
      if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
      const stored: Inbound[] = data;
      const head =
        stored.length === 0 ? "Received, by another account's keyword." : `Received as message ${stored.map((m) => m.Id).join(', ')}.`;
      setResult(head + (await senderGroups().catch(() => '')));
      props.onReceived();
    } catch {
      setError('The server could not be reached.');
    }
  }

  return (
    <form class="compose card" aria-label="Sandbox inbound text" onSubmit={(e) => void send(e)}>
      <h2>Sandbox: receive a text</h2>
      <p class="hint">
        Fakes a text from a phone to one of your numbers, as the carrier would deliver it: STOP opts the sender out; a keyword (JOIN NOW, in
        any case and spacing) makes the sender join the groups it feeds.
      </p>
      <label for="inbound-from">From (mobile number)</label>
      <input id="inbound-from" type="tel" autocomplete="off" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
      <label for="inbound-to">To (your number)</label>
      <select id="inbound-to" value={chosen} onInput={(e) => setTo(e.currentTarget.value)}>
        {props.numbers.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <label for="inbound-text">Message</label>
      <input id="inbound-text" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <ErrorLine error={error} />
      <button type="submit">Send inbound text</button>
      {result !== undefined && (
        <p role="status" data-testid="inbound-result">
          {result}
        </p>
      )}
    </form>
  );
}
