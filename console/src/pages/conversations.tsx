import { useEffect, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText } from '../api.ts';
import { CostLine } from './compose.tsx';
import { ErrorLine, submit } from './list.tsx';

type Message = components['schemas']['Message'];

/** Statuses after which a message changes no more (docs/API.md §9.11). */
const FINAL = new Set([3, 4, 5, 6, 7]);

/** Pages of sms/index (100 messages each, newest first) read to build the list of threads. */
const LIST_PAGES = 5;

/** One thread: the other party's number and its newest message. */
interface Thread {
  phone: string;
  last: Message;
  count: number;
}

/**
 * Groups a newest-first list of messages by the other party (`MobilePhone`), in both directions;
 * the threads come newest first, as their newest messages do.
 */
export function threadsOf(messages: readonly Message[]): Thread[] {
  const threads = new Map<string, Thread>();
  for (const m of messages) {
    const phone = m.MobilePhone ?? '';
    const thread = threads.get(phone);
    if (thread === undefined) threads.set(phone, { phone, last: m, count: 1 });
    else thread.count++;
  }
  return [...threads.values()];
}

/**
 * Conversations: every number's messages in both directions, newest thread first (from sms/index,
 * newest first, docs/API.md §10.6); with `phone`, that number's thread (sms/index?MobilePhone=)
 * and a reply box.
 */
export function Conversations(props: { api: MsgsvcClient; phone?: string }) {
  return props.phone ? <ThreadView api={props.api} phone={props.phone} /> : <ThreadList api={props.api} />;
}

function ThreadList(props: { api: MsgsvcClient }) {
  const [threads, setThreads] = useState<Thread[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    const load = async () => {
      const all: Message[] = [];
      for (let page = 1; page <= LIST_PAGES; page++) {
        const { data, error, response } = await props.api.GET('/v1/sms/index', {
          params: { query: { page: String(page), 'per-page': '100' } },
        });
        if (!live) return;
        if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
        all.push(...data);
        if (page >= Number(response.headers.get('X-Pagination-Page-Count') ?? 1)) break;
      }
      setThreads(threadsOf(all));
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
        <ul class="threads">
          {threads.map((t) => (
            <li key={t.phone}>
              <a href={`#/conversations/${encodeURIComponent(t.phone)}`}>{t.phone}</a>{' '}
              <span class="hint">
                {t.count} {t.count === 1 ? 'message' : 'messages'} · {t.last.DateCreated}
              </span>
              <p class="text">
                {t.last.Direction === 'Inbound' ? 'They: ' : 'You: '}
                {t.last.Message}
              </p>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function ThreadView(props: { api: MsgsvcClient; phone: string }) {
  const [messages, setMessages] = useState<Message[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      const { data, error, response } = await props.api.GET('/v1/sms/index', {
        params: { query: { MobilePhone: props.phone, 'per-page': '100' } },
      });
      if (!live) return;
      if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
      setMessages([...data].reverse());
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
      <form class="compose" onSubmit={(e) => void reply(e)}>
        <label for="reply">Reply</label>
        <textarea id="reply" name="reply" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <CostLine text={text} />
        <ErrorLine error={error} />
        <button type="submit" disabled={busy || text === ''}>
          {busy ? 'Sending…' : 'Send reply'}
        </button>
      </form>
    </>
  );
}
