import { useEffect, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText } from '../api.ts';

type Message = components['schemas']['Message'];

/** Statuses after which a message changes no more (docs/API.md §9.11: Delivered, Undelivered, Failed, Rejected, Received). */
const FINAL = new Set([3, 4, 5, 6, 7]);

/** One message (sms/view) and its history; asked again every 2 seconds until its status is final. */
export function MessageDetails(props: { api: MsgsvcClient; id: string }) {
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
  if (message === undefined) return <p role="status">Loading…</p>;
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
          {message.ErrorCode ? ` (${message.ErrorCode})` : ''}
        </dd>
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
        <dt>Text</dt>
        <dd class="text" data-testid="text">
          {message.Message}
        </dd>
      </dl>
      <h2>History</h2>
      <ol class="history">
        {history.map(([label, when]) => (
          <li key={label}>
            {label}: {when ?? 'not yet'}
          </li>
        ))}
      </ol>
    </>
  );
}
