import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { placeHref, setPlace, usePlace } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { ConfirmButton, ShownOnce, When } from './ui.tsx';
import { focusHeading, Notice, useNotice } from './template-kit.tsx';
import { EVENT_TYPES } from '../../../src/records/statuses.ts';

type Webhook = components['schemas']['Webhook'];
type Delivery = components['schemas']['Delivery'];

/** docs/API.md §12.1: the events a webhook can receive, the server's own list (src/records/statuses.ts). */
export const EVENTS: readonly string[] = EVENT_TYPES;

/** What the API's messages on a webhook's fields mean here (docs/API.md §10.8, §12.5). */
const WEBHOOK_HELP: FieldHelp = {
  Url: {
    'Url is invalid.':
      'This address is private, loopback (127.0.0.1, localhost), link-local or unspecified, or its name resolves to such an address: ' +
      "the server refuses it unless its operator allows private addresses (MSGSVC_WEBHOOK_ALLOW_PRIVATE=1). Give your receiver's public address.",
    'Url is not a valid URL.':
      'Give a whole address that starts with http:// or https://, such as https:// followed by the host and path of the receiver (at most 2,048 characters).',
    'Url cannot be blank.': 'Give the address the events are to be sent to.',
  },
  Events: {
    'Events cannot be blank.': 'Tick at least one event.',
    'Events is invalid.': 'One of the ticked events is not known to this server.',
  },
};

/** What pausing does, as the server does it (src/domain/webhooks.ts emitEvent; src/webhooks/deliverer.ts). */
const PAUSED =
  'Paused: events that happen while it is paused are not sent to it, not even later. Deliveries already pending keep their retries ' +
  '(about 5 s, 30 s, 2 min, 10 min, 1 h and 6 h after each failed attempt); to stop those too, delete the webhook.';
const ACTIVE = 'Active: every event it takes is POSTed to its URL, retried until a 2xx answer (at most 7 attempts).';

/**
 * Webhooks (docs/API.md §10.8, §12): the list (webhooks/index, paged) and a form to add one
 * (webhooks/create: its secret is shown once, until Done, whatever else is submitted); a webhook
 * opens at `#/webhooks/<id>`: its details, its Url and Events edited (webhooks/update), Pause and
 * Resume (`Active` 0 and 1), Delete (asked first), and its deliveries (webhooks/deliveries, paged in
 * the URL's `deliveries`) with Redeliver (webhooks/redeliver) on those not Pending. Changes need
 * `webhooks:write`.
 */
export function Webhooks(props: { api: Api }) {
  const place = usePlace();
  const writable = props.api.can('webhooks:write');
  // Kept here, above the list and the record: a secret stays shown until Done, wherever one goes on this page.
  const [secret, setSecret] = useState<{ url: string; value: string } | undefined>();
  const { notice, say } = useNotice();
  const shown = secret !== undefined && (
    <ShownOnce
      title={`The signing secret of the webhook to ${secret.url}`}
      value={secret.value}
      warning="Copy it now into your receiver: it checks each request's webhook-signature with it (docs/API.md §12.3). It will not be shown again."
      onDone={() => {
        setSecret(undefined);
        focusHeading();
      }}
    />
  );
  if (place.id !== undefined)
    return (
      <>
        {shown}
        <WebhookView
          api={props.api}
          id={place.id}
          writable={writable}
          onDeleted={(url) => {
            say(`The webhook to ${url} was deleted, with its deliveries.`);
            setPlace({ deliveries: undefined }, { id: null });
          }}
        />
      </>
    );
  return <WebhookList api={props.api} writable={writable} shown={shown} notice={notice} onCreated={setSecret} />;
}

function WebhookList(props: {
  api: Api;
  writable: boolean;
  shown: ComponentChildren;
  notice: ReturnType<typeof useNotice>['notice'];
  onCreated: (secret: { url: string; value: string }) => void;
}) {
  const list = usePagedList<Webhook>(
    (page) => props.api.GET('/v1/webhooks/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [props.api],
  );
  return (
    <>
      <h1>Webhooks</h1>
      <Notice notice={props.notice} />
      {props.shown}
      {props.writable && (
        <CreateWebhook
          api={props.api}
          onCreated={(secret) => {
            props.onCreated(secret);
            list.reload();
          }}
        />
      )}
      <h2>Your webhooks</h2>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No webhooks.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((w) => (
            <li key={w.Id} class="card" data-testid="webhook" data-id={w.Id}>
              <p>
                <a href={placeHref('webhooks', w.Id)} class="text">
                  {w.Url}
                </a>{' '}
                ({w.Active === 1 ? 'active' : 'paused'})
              </p>
              <p>Events: {(w.Events ?? []).join(', ')}</p>
              <p class="hint">
                Added <When value={w.DateCreated} />
              </p>
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="webhooks" />
    </>
  );
}

/** The Events checkboxes of a webhook form. */
function EventBoxes(props: { value: string[]; onChange: (events: string[]) => void; errorId: string | undefined }) {
  return (
    <fieldset class="events" aria-describedby={props.errorId}>
      <legend>Events</legend>
      {EVENTS.map((name) => (
        <label key={name} class="check">
          <input
            type="checkbox"
            checked={props.value.includes(name)}
            onInput={(e) => props.onChange(e.currentTarget.checked ? [...props.value, name] : props.value.filter((n) => n !== name))}
          />
          {name}
        </label>
      ))}
    </fieldset>
  );
}

const DEFAULT_EVENTS = ['message.delivered'];

/** Adds a webhook (webhooks/create); its secret goes up to the page, and the form is cleared, so a second submit makes nothing silently. */
function CreateWebhook(props: { api: Api; onCreated: (secret: { url: string; value: string }) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(DEFAULT_EVENTS);
  const form = useFormErrors(['Url', 'Events'], WEBHOOK_HELP);
  return (
    <form
      class="compose card"
      aria-label="Add a webhook"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void submitForm(
          () => props.api.POST('/v1/webhooks/create', { body: { Url: url.trim(), Events: events } }),
          form,
          (data) => {
            props.onCreated({ url: data?.Url ?? url, value: data?.Secret ?? '' });
            setUrl('');
            setEvents(DEFAULT_EVENTS);
          },
        );
      }}
    >
      <h2>Add a webhook</h2>
      <label for="webhook-url">URL</label>
      <input
        id="webhook-url"
        type="url"
        spellcheck={false}
        autoComplete="off"
        value={url}
        onInput={(e) => setUrl(e.currentTarget.value)}
        {...form.aria('Url', 'webhook-url')}
      />
      <FieldMessage form={form} field="Url" id="webhook-url" />
      <EventBoxes value={events} onChange={setEvents} errorId={form.of('Events') && 'webhook-events-error'} />
      <FieldMessage form={form} field="Events" id="webhook-events" />
      <GeneralError form={form} />
      <button type="submit">Add webhook</button>
    </form>
  );
}

/** One webhook (`#/webhooks/<id>`): details, Pause/Resume, edit, Delete, deliveries. */
function WebhookView(props: { api: Api; id: string; writable: boolean; onDeleted: (url: string) => void }) {
  const { api, id } = props;
  const [hook, setHook] = useState<Webhook | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const [busy, setBusy] = useState(false);
  const { notice, say } = useNotice();
  useEffect(() => {
    let live = true;
    api
      .GET('/v1/webhooks/view', { params: { query: { id } } })
      .then(({ data, error, response }) => {
        if (!live) return;
        if (response.status === 404) return setError('There is no such webhook: it was deleted, or belongs to another account.');
        if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
        setError(undefined);
        setHook(data);
      })
      .catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [api, id, tick]);

  async function setActive(active: 0 | 1) {
    setBusy(true);
    try {
      const { data, error, response } = await api.PUT('/v1/webhooks/update', { params: { query: { id } }, body: { Active: active } });
      if (error !== undefined || data === undefined) say(errorText(error, response.status));
      else {
        setHook(data);
        say(active === 1 ? 'Resumed: new events are sent to it again.' : 'Paused: new events are not sent to it.');
      }
    } catch {
      say('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  async function remove(url: string) {
    try {
      const { error, response } = await api.DELETE('/v1/webhooks/delete', { params: { query: { id } } });
      if (error !== undefined || !response.ok) return say(errorText(error, response.status));
      props.onDeleted(url);
    } catch {
      say('The server could not be reached.');
    }
  }

  const url = hook?.Url ?? '';
  return (
    <>
      <h1>Webhook {id}</h1>
      <p>
        <a href={placeHref('webhooks')}>All webhooks</a>
      </p>
      <Notice notice={notice} />
      <ErrorLine error={error} />
      {hook === undefined ? (
        error === undefined && <p role="status">Loading…</p>
      ) : (
        <>
          <dl class="details card" data-testid="webhook-details">
            <dt>URL</dt>
            <dd class="text" data-testid="webhook-url">
              {url}
            </dd>
            <dt>Events</dt>
            <dd>{(hook.Events ?? []).join(', ')}</dd>
            <dt>Added</dt>
            <dd>
              <When value={hook.DateCreated} />
            </dd>
            <dt>Changed</dt>
            <dd>
              <When value={hook.DateUpdated} />
            </dd>
          </dl>
          <section class="card" aria-labelledby="webhook-state-title">
            <h2 id="webhook-state-title">Sending</h2>
            <p data-testid="webhook-state">{hook.Active === 1 ? ACTIVE : PAUSED}</p>
            {props.writable && (
              <div class="actions">
                <button type="button" disabled={busy} onClick={() => void setActive(hook.Active === 1 ? 0 : 1)}>
                  {hook.Active === 1 ? 'Pause' : 'Resume'}
                </button>
                <ConfirmButton
                  label="Delete webhook"
                  question={`Delete the webhook to ${url}? Its pending deliveries stop (they are deleted, with its delivery history), and no event is sent there any more. This cannot be undone: a new webhook would have a new secret.`}
                  confirm="Delete webhook"
                  onConfirm={() => remove(url)}
                />
              </div>
            )}
          </section>
          {props.writable && (
            <EditWebhook
              key={`${hook.Id}-${hook.DateUpdated}`}
              api={api}
              hook={hook}
              onStart={() => say(undefined)}
              onSaved={(saved) => {
                setHook(saved);
                say('Saved.');
              }}
            />
          )}
        </>
      )}
      {error === undefined && <Deliveries api={api} writable={props.writable} webhookId={id} say={say} />}
      {error !== undefined && (
        <button type="button" class="secondary" onClick={() => setTick((n) => n + 1)}>
          Try again
        </button>
      )}
    </>
  );
}

/** Changes a webhook's Url and Events (webhooks/update). */
function EditWebhook(props: { api: Api; hook: Webhook; onStart: () => void; onSaved: (hook: Webhook) => void }) {
  const [url, setUrl] = useState(props.hook.Url ?? '');
  const [events, setEvents] = useState<string[]>(props.hook.Events ?? []);
  const form = useFormErrors(['Url', 'Events'], WEBHOOK_HELP);
  return (
    <form
      class="compose card"
      aria-label="Edit the webhook"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        props.onStart();
        void submitForm(
          () =>
            props.api.PUT('/v1/webhooks/update', {
              params: { query: { id: String(props.hook.Id) } },
              body: { Url: url.trim(), Events: events },
            }),
          form,
          (data) => data !== undefined && props.onSaved(data),
        );
      }}
    >
      <h2>Edit</h2>
      <label for="edit-webhook-url">URL</label>
      <input
        id="edit-webhook-url"
        type="url"
        spellcheck={false}
        autoComplete="off"
        value={url}
        onInput={(e) => setUrl(e.currentTarget.value)}
        {...form.aria('Url', 'edit-webhook-url')}
      />
      <FieldMessage form={form} field="Url" id="edit-webhook-url" />
      <EventBoxes value={events} onChange={setEvents} errorId={form.of('Events') && 'edit-webhook-events-error'} />
      <FieldMessage form={form} field="Events" id="edit-webhook-events" />
      <GeneralError form={form} />
      <button type="submit">Save changes</button>
    </form>
  );
}

/** A webhook's deliveries, newest first, paged in the URL (`deliveries`), refreshed every 5 s; Redeliver on those not Pending. */
function Deliveries(props: { api: Api; writable: boolean; webhookId: string; say: (text: string) => void }) {
  const list = usePagedList<Delivery>(
    (page) =>
      props.api.GET('/v1/webhooks/deliveries', {
        params: { query: { id: props.webhookId, page: String(page), 'per-page': '20' } },
      }),
    [props.api, props.webhookId],
    { param: 'deliveries', refreshMs: 5000 },
  );

  async function redeliver(d: Delivery) {
    try {
      const { error, response } = await props.api.POST('/v1/webhooks/redeliver', { params: { query: { id: String(d.Id) } } });
      if (error !== undefined || !response.ok) return props.say(errorText(error, response.status));
      props.say(`Delivery ${d.Id} (${d.Event}) is queued again: Pending.`);
      list.reload();
    } catch {
      props.say('The server could not be reached.');
    }
  }

  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <p class="hint">
        Newest first. A delivery that gets no 2xx answer is retried about 5 s, 30 s, 2 min, 10 min, 1 h and 6 h after each attempt, then it
        is Failed; Redeliver queues it once more.
      </p>
      <ErrorLine error={list.error} />
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
              <p class="hint">
                Created <When value={d.DateCreated} /> · last change <When value={d.DateUpdated} />
              </p>
              {props.writable && d.Status !== 'Pending' && (
                <button type="button" aria-label={`Redeliver delivery ${d.Id} (${d.Event ?? ''})`} onClick={() => void redeliver(d)}>
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
