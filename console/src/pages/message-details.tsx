import { useEffect, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { ErrorCodeText } from '../error-codes.tsx';
import { placeHref } from '../route.ts';
import { When } from './ui.tsx';

type Message = components['schemas']['Message'];
type Link = components['schemas']['TrackedLink'];

/** Statuses after which a message changes no more (docs/API.md §9.11: Delivered, Undelivered, Failed, Rejected, Received). */
const FINAL = new Set([3, 4, 5, 6, 7]);

/**
 * One message (sms/view), its history and its tracked links; asked again every 2 seconds until its
 * status is final. Its ErrorCode is explained (GET /v1/errors); its dates are in the console's one
 * format.
 */
export function MessageDetails(props: { api: Api; id: string }) {
  const [message, setMessage] = useState<Message | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      const { data, error, response } = await props.api.GET('/v1/sms/view', { params: { query: { id: props.id } } });
      if (!live) return;
      if (error !== undefined) return setError(errorText(error, response.status));
      setMessage(data);
      if (!FINAL.has(data.Status_Id ?? 0)) timer = setTimeout(() => void load().catch(() => undefined), 2000);
    };
    void load().catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [props.api, props.id]);

  if (error !== undefined)
    return (
      <>
        <h1>Message {props.id}</h1>
        <p class="error" role="alert">
          {error}
        </p>
      </>
    );
  if (message === undefined)
    return (
      <>
        <h1>Message {props.id}</h1>
        <p role="status">Loading…</p>
      </>
    );
  const history: [string, string | null | undefined][] = [
    ['Created', message.DateCreated],
    ['Sent', message.DateSent],
    [message.Status_Id === 3 ? 'Delivered' : 'Outcome', message.DateDelivered],
  ];
  return (
    <>
      <h1>Message {message.Id}</h1>
      <p>
        <a href="#/messages">Back to the messages</a>
      </p>
      <dl class="details">
        <dt>Status</dt>
        <dd data-testid="status" aria-live="polite">
          {message.Status_Description}
        </dd>
        {message.ErrorCode ? (
          <>
            <dt>Error</dt>
            <dd data-testid="error">
              <ErrorCodeText api={props.api} code={message.ErrorCode} />
            </dd>
          </>
        ) : null}
        <dt>Direction</dt>
        <dd>{message.Direction}</dd>
        <dt>To / from</dt>
        <dd>{message.MobilePhone}</dd>
        <dt>Our number</dt>
        <dd>{message.Number}</dd>
        <dt>Type</dt>
        <dd>{message.Type_Description}</dd>
        <dt>Segments, credits</dt>
        <dd>
          {message.Segments}, {message.Credits}
        </dd>
        {message.BatchId !== '' && message.BatchId !== undefined && (
          <>
            <dt>Batch</dt>
            <dd>
              <a href={placeHref('messages', undefined, { BatchId: String(message.BatchId) })}>Batch {message.BatchId}: its messages</a>
            </dd>
          </>
        )}
        {message.ScheduledMessageId !== '' && message.ScheduledMessageId !== undefined && (
          <>
            <dt>Scheduled</dt>
            <dd>Sent from scheduled message {message.ScheduledMessageId}</dd>
          </>
        )}
        <dt>Text</dt>
        <dd class="text" data-testid="text">
          {message.Message}
        </dd>
      </dl>
      <h2>History</h2>
      <ol class="history">
        {history.map(([label, when]) => (
          <li key={label}>
            {label}: <When value={when} empty="not yet" />
          </li>
        ))}
      </ol>
      <Links api={props.api} id={props.id} />
    </>
  );
}

/**
 * The message's tracked links (sms/links, docs/API.md §14.4.3) with their clicks, asked again every
 * 10 seconds while the page is open; nothing when the message was sent without ShortenLinks.
 */
function Links(props: { api: MsgsvcClient; id: string }) {
  const [links, setLinks] = useState<Link[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    const load = async () => {
      const { data, error, response } = await props.api.GET('/v1/sms/links', { params: { query: { id: props.id, 'per-page': '100' } } });
      if (!live) return;
      if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
      setLinks(data);
    };
    void load().catch(() => live && setError('The server could not be reached.'));
    const timer = setInterval(() => void load().catch(() => undefined), 10_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [props.api, props.id]);
  return (
    <section aria-labelledby="links-title">
      <h2 id="links-title">Link clicks</h2>
      {error !== undefined ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : links === undefined ? (
        <p role="status">Loading…</p>
      ) : links.length === 0 ? (
        <p class="hint">No tracked links: the message was sent without ShortenLinks, or its text held no URL.</p>
      ) : (
        <div class="table-box">
          <table>
            <caption class="visually-hidden">Tracked links of message {props.id}</caption>
            <thead>
              <tr>
                <th scope="col">Link</th>
                <th scope="col">Code</th>
                <th scope="col">Clicks</th>
                <th scope="col">First click</th>
                <th scope="col">Last click</th>
              </tr>
            </thead>
            <tbody>
              {links.map((l) => (
                <tr key={l.Code} data-testid="link">
                  <td class="text" data-label="Link">
                    {l.Url}
                  </td>
                  <td data-label="Code">
                    <code>{l.Code}</code>
                  </td>
                  <td data-label="Clicks" data-testid="clicks">
                    {l.Clicks}
                  </td>
                  <td data-label="First click">
                    <When value={l.FirstClick} />
                  </td>
                  <td data-label="Last click">
                    <When value={l.LastClick} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
