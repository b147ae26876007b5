import { useEffect, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { ErrorLine, Pager, submit, usePagedList, type PageAnswer } from './list.tsx';

type Keyword = components['schemas']['KeywordReservation'];
type Inbound = components['schemas']['Message'];

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

/**
 * Keywords (keyword/index, paged): reserve one on a number (keyword/reserve), release one
 * (keyword/delete), and, while the sandbox is the carrier, a box that sends an inbound text
 * (sandbox/inbound, docs/API.md §11.3), e.g. STOP to opt its sender out. Reserving and the
 * sandbox box need `sms:write` (keyword/reserve is an `sms` operation), releasing `keywords:write`.
 */
export function Keywords(props: { api: Api }) {
  const canReserve = props.api.can('sms:write');
  const canRelease = props.api.can('keywords:write');
  const numbers = useNumbers(props.api);
  const list = usePagedList<Keyword>(
    // JSON is asked for, so the records are in their JSON form (the schema also allows the XML one).
    (page) =>
      props.api
        .GET('/v1/keyword/index', { params: { query: { page: String(page), 'per-page': '20' } } })
        .then((answer) => answer as PageAnswer<Keyword>),
    [props.api],
  );
  const [keyword, setKeyword] = useState('');
  const [number, setNumber] = useState('');
  const [reply, setReply] = useState('');
  const [error, setError] = useState<string | undefined>();
  const chosen = number || numbers[0] || '';

  return (
    <>
      <h1>Keywords</h1>
      {canReserve && (
        <form
          class="compose card"
          aria-label="Reserve a keyword"
          onSubmit={(e) => {
            e.preventDefault();
            void submit(
              () => props.api.POST('/v1/keyword/reserve', { body: { Keyword: keyword, Number: chosen, AutoreplyMessage: reply } }),
              setError,
              () => {
                setKeyword('');
                setReply('');
                list.reload();
              },
            );
          }}
        >
          <h2>Reserve a keyword</h2>
          <label for="keyword">Keyword</label>
          <input id="keyword" value={keyword} onInput={(e) => setKeyword(e.currentTarget.value)} />
          <label for="keyword-number">On number</label>
          <select id="keyword-number" value={chosen} onInput={(e) => setNumber(e.currentTarget.value)}>
            {numbers.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
          <label for="keyword-reply">Automatic reply (optional)</label>
          <textarea id="keyword-reply" rows={2} value={reply} onInput={(e) => setReply(e.currentTarget.value)} />
          <ErrorLine error={error} />
          <button type="submit">Reserve</button>
        </form>
      )}
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No keywords.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((k) => (
            <li key={k.Id} class="card" data-testid="keyword">
              <p>
                <strong>{k.Keyword}</strong> on {k.Number}
              </p>
              {(k.AutoreplyMessage ?? '') !== '' && <p class="text">Reply: {k.AutoreplyMessage}</p>}
              {canRelease && (
                <div class="actions">
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Release ${k.Keyword ?? ''}`}
                    onClick={() =>
                      void submit(
                        () => props.api.DELETE('/v1/keyword/delete', { params: { query: { id: String(k.Id) } } }),
                        setError,
                        list.reload,
                      )
                    }
                  >
                    Release
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="keywords" />
      {canReserve && <SandboxInbound api={props.api} numbers={numbers} />}
    </>
  );
}

/** The sandbox's inbound box (sandbox/inbound): a text from a number to one of the account's numbers. */
function SandboxInbound(props: { api: MsgsvcClient; numbers: string[] }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [stored, setStored] = useState<Inbound[] | undefined>();
  const chosen = to || props.numbers[0] || '';

  async function send(event: Event) {
    event.preventDefault();
    setError(undefined);
    setStored(undefined);
    try {
      const { data, error, response } = await props.api.POST('/v1/sandbox/inbound', { body: { From: from, To: chosen, Message: text } });
      if (response.status === 404) return setError('The sandbox is not the carrier of this server: inbound texts come from the carrier.');
      if (error !== undefined) return setError(errorText(error, response.status));
      setStored(data);
    } catch {
      setError('The server could not be reached.');
    }
  }

  return (
    <form class="compose card" aria-label="Sandbox inbound text" onSubmit={(e) => void send(e)}>
      <h2>Sandbox: receive a text</h2>
      <p class="hint">Fakes a text from a phone to one of your numbers, as the carrier would deliver it: STOP opts the sender out.</p>
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
      {stored !== undefined && (
        <p role="status" data-testid="inbound-result">
          {stored.length === 0 ? "Received, by another account's keyword." : `Received as message ${stored.map((m) => m.Id).join(', ')}.`}
        </p>
      )}
    </form>
  );
}
