import { useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';
import { EVENT_TYPES } from '../../../src/records/statuses.ts';

type Webhook = components['schemas']['Webhook'];
type Delivery = components['schemas']['Delivery'];

/** docs/API.md §12.1: the events a webhook can receive, the server's own list (src/records/statuses.ts). */
export const EVENTS: readonly string[] = EVENT_TYPES;

/**
 * Webhooks (webhooks/index, paged), a form to add one (webhooks/create, whose secret is shown
 * once), and each webhook's deliveries (webhooks/deliveries, paged) with a redeliver button
 * (webhooks/redeliver) on those that are not pending (docs/API.md §10.8, §12.4). Adding and
 * redelivering need `webhooks:write`.
 */
export function Webhooks(props: { api: Api }) {
  const writable = props.api.can('webhooks:write');
  const list = usePagedList<Webhook>(
    (page) => props.api.GET('/v1/webhooks/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [props.api],
  );
  const [open, setOpen] = useState<number | undefined>();
  return (
    <>
      <h1>Webhooks</h1>
      {writable && <CreateWebhook api={props.api} onDone={list.reload} />}
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No webhooks.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((w) => (
            <li key={w.Id} class="card" data-testid="webhook">
              <p>
                <strong class="text">{w.Url}</strong> ({w.Active === 1 ? 'active' : 'paused'})
              </p>
              <p>{(w.Events ?? []).join(', ')}</p>
              <div class="actions">
                <button type="button" aria-expanded={open === w.Id} onClick={() => setOpen(open === w.Id ? undefined : w.Id)}>
                  {open === w.Id ? 'Hide deliveries' : 'Deliveries'}
                </button>
              </div>
              {open === w.Id && <Deliveries api={props.api} writable={writable} webhookId={String(w.Id)} />}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="webhooks" />
    </>
  );
}

/** A webhook's deliveries, newest first, each with its attempts and last answer, and Redeliver. */
function Deliveries(props: { api: MsgsvcClient; writable: boolean; webhookId: string }) {
  const list = usePagedList<Delivery>(
    (page) =>
      props.api.GET('/v1/webhooks/deliveries', {
        params: { query: { id: props.webhookId, page: String(page), 'per-page': '20' } },
      }),
    [props.api, props.webhookId],
  );
  const [error, setError] = useState<string | undefined>();
  return (
    <section aria-label={`Deliveries of webhook ${props.webhookId}`}>
      <h2>Deliveries</h2>
      <ErrorLine error={list.error ?? error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No deliveries yet.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((d) => (
            <li key={d.Id} class="card" data-testid="delivery" data-status={d.Status}>
              <p>
                <strong>{d.Event}</strong> · <span data-testid="delivery-status">{d.Status}</span> · {d.Attempts}{' '}
                {d.Attempts === 1 ? 'attempt' : 'attempts'}
                {(d.LastError ?? '') !== '' && ` · ${d.LastError ?? ''}`}
              </p>
              <p class="hint">Updated {d.DateUpdated}</p>
              {props.writable && d.Status !== 'Pending' && (
                <button
                  type="button"
                  onClick={() =>
                    void submit(
                      () => props.api.POST('/v1/webhooks/redeliver', { params: { query: { id: String(d.Id) } } }),
                      setError,
                      list.reload,
                    )
                  }
                >
                  Redeliver
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="deliveries" />
    </section>
  );
}

/** Adds a webhook (webhooks/create) and shows its secret, which the API never shows again. */
function CreateWebhook(props: { api: MsgsvcClient; onDone: () => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['message.delivered']);
  const [secret, setSecret] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  return (
    <form
      class="compose card"
      aria-label="Add a webhook"
      onSubmit={(e) => {
        e.preventDefault();
        setSecret(undefined);
        void submit(
          async () => {
            const answer = await props.api.POST('/v1/webhooks/create', { body: { Url: url, Events: events } });
            if (answer.data !== undefined) setSecret(answer.data.Secret);
            return answer;
          },
          setError,
          () => {
            setUrl('');
            props.onDone();
          },
        );
      }}
    >
      <h2>Add a webhook</h2>
      <label for="webhook-url">URL</label>
      <input id="webhook-url" type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      <fieldset class="events">
        <legend>Events</legend>
        {EVENTS.map((name) => (
          <label key={name} class="check">
            <input
              type="checkbox"
              checked={events.includes(name)}
              onInput={(e) => setEvents(e.currentTarget.checked ? [...events, name] : events.filter((n) => n !== name))}
            />
            {name}
          </label>
        ))}
      </fieldset>
      <ErrorLine error={error} />
      <button type="submit">Add webhook</button>
      {secret !== undefined && (
        <p role="status">
          Its signing secret, shown only now: <code class="text">{secret}</code>
        </p>
      )}
    </form>
  );
}
