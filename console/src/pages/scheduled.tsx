import { useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';

type Scheduled = components['schemas']['ScheduledSingleMessage'];

/** docs/API.md §11.7: why a scheduled message has the status it has, in one sentence. */
export function scheduledReason(statusId: number | undefined): string {
  if (statusId === 2)
    return 'Needs action: the number is not Active, the recipient opted out, or the credits do not cover it. Add credits, or edit or cancel it.';
  if (statusId === 3) return 'Approved: its credits are reserved and it will be sent at its time.';
  return 'Pending: it is being checked (number, opt-out, credits).';
}

/** `YYYY:MM:DD HH:MM:SS` (docs/API.md §9.10) as a datetime-local value `YYYY-MM-DDTHH:MM`. */
function toLocalInput(dateTime: string | undefined): string {
  const m = /^(\d{4})[:-](\d{2})[:-](\d{2}) (\d{2}):(\d{2})/.exec(dateTime ?? '');
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}` : '';
}

/** A datetime-local value as `YYYY-MM-DD HH:MM:SS`, which the API reads in the service's time zone (docs/API.md §10.6). */
export function fromLocalInput(value: string): string {
  const [date = '', time = ''] = value.split('T');
  return `${date} ${time.length === 5 ? `${time}:00` : time}`;
}

/**
 * Scheduled messages (sms/single-schedule-messages, paged): each with its time (the service's time
 * zone), its status and why; edit its text and time (sms/update-scheduled) or cancel it
 * (sms/cancel-scheduled); those three need `sms:write`.
 */
export function ScheduledMessages(props: { api: Api }) {
  const writable = props.api.can('sms:write');
  const list = usePagedList<Scheduled>(
    (page) => props.api.GET('/v1/sms/single-schedule-messages', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [props.api],
  );
  const [editing, setEditing] = useState<number | undefined>();
  const [error, setError] = useState<string | undefined>();

  return (
    <>
      <h1>Scheduled messages</h1>
      <p class="hint">Times are in the service's time zone.</p>
      {writable && <ScheduleForm api={props.api} onDone={list.reload} />}
      <ErrorLine error={list.error ?? error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No scheduled messages.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((s) => (
            <li key={s.Id} class="card" data-testid="scheduled" data-id={s.Id}>
              <p>
                <strong>To {s.MobilePhone}</strong> at <span class="nowrap">{s.DateTime}</span> ({s.Type_Description})
              </p>
              <p class="text">{s.Message}</p>
              <p data-status={s.Status_Description}>
                <strong>{s.Status_Description}</strong>: {scheduledReason(s.Status_Id)}
              </p>
              {editing === s.Id ? (
                <EditScheduled
                  api={props.api}
                  message={s}
                  onDone={() => {
                    setEditing(undefined);
                    list.reload();
                  }}
                />
              ) : (
                writable && (
                  <div class="actions">
                    <button type="button" onClick={() => setEditing(s.Id)}>
                      Edit
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      onClick={() =>
                        void submit(
                          () => props.api.DELETE('/v1/sms/cancel-scheduled', { params: { query: { id: String(s.Id) } } }),
                          setError,
                          list.reload,
                        )
                      }
                    >
                      Cancel message
                    </button>
                  </div>
                )
              )}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="scheduled messages" />
    </>
  );
}

/** A new scheduled SMS (sms/schedule): number, text and time. */
function ScheduleForm(props: { api: MsgsvcClient; onDone: () => void }) {
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [when, setWhen] = useState('');
  const [error, setError] = useState<string | undefined>();
  return (
    <form
      class="compose card"
      aria-label="Schedule a message"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(
          () => props.api.POST('/v1/sms/schedule', { body: { MobilePhone: to, Message: text, DateTime: fromLocalInput(when) } }),
          setError,
          () => {
            setText('');
            props.onDone();
          },
        );
      }}
    >
      <h2>Schedule a message</h2>
      <label for="schedule-to">To (mobile number)</label>
      <input id="schedule-to" type="tel" autocomplete="off" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
      <label for="schedule-text">Message</label>
      <textarea id="schedule-text" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <label for="schedule-when">Send at (service time zone)</label>
      <input id="schedule-when" type="datetime-local" value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
      <ErrorLine error={error} />
      <button type="submit">Schedule</button>
    </form>
  );
}

/** Edits a scheduled message's text and time (sms/update-scheduled; it is then Pending again). */
function EditScheduled(props: { api: MsgsvcClient; message: Scheduled; onDone: () => void }) {
  const [text, setText] = useState(props.message.Message ?? '');
  const [when, setWhen] = useState(toLocalInput(props.message.DateTime));
  const [error, setError] = useState<string | undefined>();
  const id = String(props.message.Id);
  return (
    <form
      class="compose"
      aria-label={`Edit scheduled message ${id}`}
      onSubmit={(e) => {
        e.preventDefault();
        void submit(
          () =>
            props.api.PATCH('/v1/sms/update-scheduled', {
              params: { query: { id } },
              body: { Message: text, DateTime: fromLocalInput(when) },
            }),
          setError,
          props.onDone,
        );
      }}
    >
      <label for={`edit-text-${id}`}>Message</label>
      <textarea id={`edit-text-${id}`} rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <label for={`edit-when-${id}`}>Send at (service time zone)</label>
      <input id={`edit-when-${id}`} type="datetime-local" value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
      <ErrorLine error={error} />
      <div class="actions">
        <button type="submit">Save</button>
        <button type="button" class="secondary" onClick={props.onDone}>
          Close
        </button>
      </div>
    </form>
  );
}
