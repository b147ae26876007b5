import { useRef, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { placeHref, usePlace } from '../route.ts';
import { MessageField, tooLong } from './compose-text.tsx';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';
import { numberText } from './numbers.tsx';
import { When } from './ui.tsx';

type Message = components['schemas']['Message'];
type Conversation = components['schemas']['Conversation'];

/** Threads a page (sms/conversations, newest first, docs/API.md §14.4.1). */
const THREADS_PER_PAGE = '20';
/** Messages a page of one thread (sms/index?MobilePhone=, newest first). */
const MESSAGES_PER_PAGE = '20';

/**
 * Conversations: one thread per number in both directions, newest thread first, with its unread
 * count and the account's number it uses (`Number`, docs/API.md §17: that of its newest message)
 * (sms/conversations, paged, the page in the URL); the open thread is the URL's record
 * (`#/conversations/<number>`): that number's messages (sms/index?MobilePhone=, paged, newest page
 * first) and a reply box. Opening a thread marks it read (sms/mark-read). Both are asked again
 * every few seconds while open, so statuses and new texts show without a reload.
 */
export function Conversations(props: { api: Api; /** Ignored: the open thread is read from the URL (usePlace). */ phone?: string }) {
  const { id } = usePlace();
  return id ? <ThreadView key={id} api={props.api} phone={id} /> : <ThreadList api={props.api} />;
}

function ThreadList(props: { api: Api }) {
  const list = usePagedList<Conversation>(
    (page) => props.api.GET('/v1/sms/conversations', { params: { query: { page: String(page), 'per-page': THREADS_PER_PAGE } } }),
    [props.api],
    { refreshMs: 10_000 },
  );
  return (
    <>
      <h1>Conversations</h1>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        list.error === undefined && <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No messages yet.</p>
      ) : (
        <ul class="threads">
          {list.rows.map((t) => (
            <li key={t.MobilePhone} data-testid="thread">
              <a href={placeHref('conversations', t.MobilePhone ?? '')}>{t.MobilePhone}</a>{' '}
              {(t.Unread ?? 0) > 0 && (
                <span class="unread" data-testid="unread">
                  {t.Unread} unread
                </span>
              )}{' '}
              <span class="hint">
                {t.ContactId !== '' && t.ContactId !== undefined ? 'contact · ' : ''}
                <When value={t.LastMessage?.DateCreated} />
                {t.Number !== undefined && t.Number !== '' && (
                  <>
                    {' · on '}
                    <span data-testid="thread-number">{numberText(t.Number)}</span>
                  </>
                )}
              </span>
              <p class="text">
                {t.LastMessage?.Direction === 'Inbound' ? 'They: ' : 'You: '}
                {t.LastMessage?.Message}
              </p>
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="conversations" />
    </>
  );
}

function ThreadView(props: { api: Api; phone: string }) {
  const { api, phone } = props;
  const writable = api.can('sms:write');
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [sent, setSent] = useState<string | undefined>();
  const readUpTo = useRef(0);
  const replyBox = useRef<HTMLDivElement>(null);
  const list = usePagedList<Message>(
    async (page) => {
      const answer = await api.GET('/v1/sms/index', {
        params: { query: { MobilePhone: phone, page: String(page), 'per-page': MESSAGES_PER_PAGE } },
      });
      // Opening the thread reads it: its inbound messages are no longer unread (docs/API.md §14.4.1).
      const newestInbound = Math.max(0, ...(answer.data ?? []).filter((m) => m.Direction === 'Inbound').map((m) => m.Id ?? 0));
      if (writable && newestInbound > readUpTo.current) {
        readUpTo.current = newestInbound;
        await api.POST('/v1/sms/mark-read', { params: { query: { MobilePhone: phone } } }).catch(() => {
          readUpTo.current = 0;
        });
      }
      return answer;
    },
    [api, phone],
    { refreshMs: 3000 },
  );
  const messages = list.rows === undefined ? undefined : [...list.rows].reverse();
  const over = tooLong(text);

  async function reply(event: Event) {
    event.preventDefault();
    if (over || text === '') return;
    setBusy(true);
    setSent(undefined);
    await submit(
      () => api.POST('/v1/sms/send', { body: { MobilePhone: phone, Message: text } }),
      setError,
      () => {
        setText('');
        setSent('Reply sent: it shows in the thread above.');
        list.setPage(1);
        list.reload();
      },
    );
    setBusy(false);
    // The Send button was disabled while sending: the focus goes back to the reply box, ready for the next one.
    requestAnimationFrame(() => replyBox.current?.querySelector('textarea')?.focus());
  }

  return (
    <>
      <h1>Conversation with {phone}</h1>
      <p>
        <a href="#/conversations">Back to the conversations</a>
      </p>
      {list.pages.pages > 1 && <p class="hint">Page 1 holds the newest messages; Next goes back in time. Each page reads oldest first.</p>}
      {messages === undefined ? (
        list.error === undefined && <p role="status">Loading…</p>
      ) : (
        <ol class="thread" aria-label="Messages, oldest first">
          {messages.map((m) => (
            <li key={m.Id} class={m.Direction === 'Inbound' ? 'in' : 'out'} data-testid="thread-message">
              <p class="text">{m.Message}</p>
              <p class="hint">
                {m.Direction === 'Inbound' ? 'Received' : 'Sent'} <When value={m.DateCreated} /> ·{' '}
                <span data-status={m.Status_Description}>{m.Status_Description}</span>
              </p>
            </li>
          ))}
        </ol>
      )}
      <Pager list={list} noun="messages" />
      <ErrorLine error={list.error} />
      {writable && (
        <form class="compose" onSubmit={(e) => void reply(e)}>
          <div ref={replyBox}>
            <MessageField id="reply" label="Reply" rows={3} value={text} onInput={setText} />
          </div>
          <ErrorLine error={error} />
          <p class="hint" role="status" data-testid="reply-status">
            {sent ?? ''}
          </p>
          <button type="submit" disabled={busy || text === '' || over}>
            {busy ? 'Sending…' : 'Send reply'}
          </button>
        </form>
      )}
    </>
  );
}
