import { useEffect, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { CostLine } from './compose.tsx';
import { ErrorLine, submit } from './list.tsx';

type Message = components['schemas']['Message'];
type Conversation = components['schemas']['Conversation'];

/** Statuses after which a message changes no more (docs/API.md §9.11). */
const FINAL = new Set([3, 4, 5, 6, 7]);

/** Threads shown: the first page of sms/conversations (newest first, docs/API.md §10.6). */
const LIST_SIZE = '100';

/**
 * Conversations: one thread per number in both directions, newest thread first, with its unread
 * count (sms/conversations, docs/API.md §10.6); with `phone`, that number's thread
 * (sms/index?MobilePhone=) and a reply box. Opening a thread marks it read (sms/mark-read).
 */
export function Conversations(props: { api: Api; phone?: string }) {
  return props.phone ? <ThreadView api={props.api} phone={props.phone} /> : <ThreadList api={props.api} />;
}

function ThreadList(props: { api: MsgsvcClient }) {
  const [threads, setThreads] = useState<Conversation[] | undefined>();
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    const load = async () => {
      const { data, error, response } = await props.api.GET('/v1/sms/conversations', {
        params: { query: { 'per-page': LIST_SIZE } },
      });
      if (!live) return;
      if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
      setThreads(data);
      setTotal(Number(response.headers.get('X-Pagination-Total-Count') ?? data.length) || data.length);
    };
    load().catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [props.api]);
  return (
    <>
      <h1>Conversations</h1>
      <ErrorLine error={error} />
      {threads === undefined ? (
        error === undefined && <p role="status">Loading…</p>
      ) : threads.length === 0 ? (
        <p>No messages yet.</p>
      ) : (
        <>
          {total > threads.length && (
            <p class="hint">
              The {threads.length} most recent of {total} conversations.
            </p>
          )}
          <ul class="threads">
            {threads.map((t) => (
              <li key={t.MobilePhone} data-testid="thread">
                <a href={`#/conversations/${encodeURIComponent(t.MobilePhone ?? '')}`}>{t.MobilePhone}</a>{' '}
                {(t.Unread ?? 0) > 0 && (
                  <span class="unread" data-testid="unread">
                    {t.Unread} unread
                  </span>
                )}{' '}
                <span class="hint">
                  {t.ContactId !== '' && t.ContactId !== undefined ? 'contact · ' : ''}
                  {t.LastMessage?.DateCreated}
                </span>
                <p class="text">
                  {t.LastMessage?.Direction === 'Inbound' ? 'They: ' : 'You: '}
                  {t.LastMessage?.Message}
                </p>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function ThreadView(props: { api: Api; phone: string }) {
  const writable = props.api.can('sms:write');
  const [messages, setMessages] = useState<Message[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let readUpTo = 0;
    const load = async () => {
      const { data, error, response } = await props.api.GET('/v1/sms/index', {
        params: { query: { MobilePhone: props.phone, 'per-page': '100' } },
      });
      if (!live) return;
      if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
      setMessages([...data].reverse());
      // Opening the thread reads it: its inbound messages are no longer unread (docs/API.md §10.6).
      const newestInbound = Math.max(0, ...data.filter((m) => m.Direction === 'Inbound').map((m) => m.Id ?? 0));
      if (writable && newestInbound > readUpTo) {
        readUpTo = newestInbound;
        await props.api.POST('/v1/sms/mark-read', { params: { query: { MobilePhone: props.phone } } });
      }
      // Asked again every 2 seconds while a message may still change (not final).
      if (data.some((m) => !FINAL.has(m.Status_Id ?? 0))) timer = setTimeout(() => void load().catch(() => undefined), 2000);
    };
    load().catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [props.api, props.phone, tick]);

  async function reply(event: Event) {
    event.preventDefault();
    setBusy(true);
    await submit(
      () => props.api.POST('/v1/sms/send', { body: { MobilePhone: props.phone, Message: text } }),
      setError,
      () => {
        setText('');
        setTick((n) => n + 1);
      },
    );
    setBusy(false);
  }

  return (
    <>
      <h1>Conversation with {props.phone}</h1>
      <p>
        <a href="#/conversations">Back to the conversations</a>
      </p>
      {messages === undefined ? (
        error === undefined && <p role="status">Loading…</p>
      ) : (
        <ol class="thread" aria-label="Messages, oldest first">
          {messages.map((m) => (
            <li key={m.Id} class={m.Direction === 'Inbound' ? 'in' : 'out'} data-testid="thread-message">
              <p class="text">{m.Message}</p>
              <p class="hint">
                {m.Direction === 'Inbound' ? 'Received' : 'Sent'} {m.DateCreated} ·{' '}
                <span data-status={m.Status_Description}>{m.Status_Description}</span>
              </p>
            </li>
          ))}
        </ol>
      )}
      {!writable && <ErrorLine error={error} />}
      {writable && (
        <form class="compose" onSubmit={(e) => void reply(e)}>
          <label for="reply">Reply</label>
          <textarea id="reply" name="reply" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
          <CostLine text={text} />
          <ErrorLine error={error} />
          <button type="submit" disabled={busy || text === ''}>
            {busy ? 'Sending…' : 'Send reply'}
          </button>
        </form>
      )}
    </>
  );
}
