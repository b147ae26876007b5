import { useEffect, useRef, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { FieldMessage, GeneralError, submitForm, useFormErrors } from './fields.tsx';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { ConfirmButton, formatDate, serviceDateTime, toLocalInput, When } from './ui.tsx';
import { MessageField, tooLong } from './compose-text.tsx';
import { PreviewBox, usePreview } from './compose-preview.tsx';
import { describeRRule, RecurrenceField } from './compose-rrule.tsx';
import { SEND_HELP } from './compose.tsx';

type Scheduled = components['schemas']['ScheduledSingleMessage'];
type WithRRule = components['schemas']['ScheduledSingleMessageWithRRule'];

/** How often the list is asked again: a new or edited message moves from Pending within seconds (docs/API.md §11.7). */
const REFRESH_MS = 5000;

/** The fields of the schedule and edit forms, each shown next to its control. */
const FIELDS = ['MobilePhone', 'Message', 'DateTime', 'RRule', 'Number'];

/**
 * docs/API.md §11.7: why a scheduled message has its status, when there is a reason to give (Action
 * Required); "" for Pending (being checked) and Approved (credits reserved), whose status says it all.
 */
export function scheduledReason(statusId: number | undefined): string {
  if (statusId === 2)
    return 'The number is not Active, the recipient opted out, or the credits do not cover it. Add credits, or edit or cancel it.';
  return '';
}

/** A recipient's digits as a number to read (`+15551234567`). */
function phone(digits: string | undefined): string {
  return digits === undefined || digits === '' ? '' : `+${digits}`;
}

/**
 * The `RRule` of each listed message: sms/single-schedule-messages keeps the spec's fields only
 * (docs/API.md §14.3.3), so each is read with sms/view-scheduled, again only when its record
 * changed (an edit, a status, the next occurrence).
 */
function useRRules(api: Api, rows: Scheduled[] | undefined, version: number): Map<number, string> {
  const cache = useRef(new Map<string, string>());
  const [, setTick] = useState(0);
  const key = (s: Scheduled) => `${s.Id}|${s.DateTime}|${s.Status_Id}|${s.Message}`;
  useEffect(() => {
    if (rows === undefined) return;
    let live = true;
    const missing = rows.filter((s) => !cache.current.has(key(s)));
    void Promise.all(
      missing.map(async (s) => {
        const { data } = await api.call<WithRRule>('GET', '/v1/sms/view-scheduled', { query: { id: String(s.Id) } });
        if (data !== undefined) cache.current.set(key(s), data.RRule ?? '');
      }),
    )
      .catch(() => undefined)
      .then(() => live && missing.length > 0 && setTick((n) => n + 1));
    return () => {
      live = false;
    };
  }, [api, rows, version]);
  const out = new Map<number, string>();
  for (const s of rows ?? []) {
    const rule = cache.current.get(key(s));
    if (rule !== undefined && s.Id !== undefined) out.set(s.Id, rule);
  }
  return out;
}

/**
 * Scheduled messages (sms/single-schedule-messages, paged, asked again every 5 seconds so that a
 * Pending one shows Approved or Action Required without a reload): each with its time (the
 * service's time zone), its status (and the reason, when it needs action), its recurrence; edit
 * its text, time and recurrence (sms/update-scheduled) or cancel it, asked first
 * (sms/cancel-scheduled); those three need `sms:write`.
 */
export function ScheduledMessages(props: { api: Api }) {
  const { api } = props;
  const writable = api.can('sms:write');
  const list = usePagedList<Scheduled>(
    (page) => api.GET('/v1/sms/single-schedule-messages', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [api],
    { refreshMs: REFRESH_MS },
  );
  const [version, setVersion] = useState(0);
  const rrules = useRRules(api, list.rows, version);
  const [editing, setEditing] = useState<number | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const doneRef = useRef<HTMLParagraphElement>(null);
  /** Says what happened and takes the focus there (the control that had it is gone). */
  const announce = (text: string) => {
    setDone(text);
    requestAnimationFrame(() => doneRef.current?.focus());
  };

  const cancel = async (s: Scheduled) => {
    setError(undefined);
    try {
      const { error, response } = await api.DELETE('/v1/sms/cancel-scheduled', { params: { query: { id: String(s.Id) } } });
      if (error !== undefined || !response.ok) setError(errorText(error, response.status));
      else
        announce(
          `Cancelled the message to ${phone(s.MobilePhone)} at ${formatDate(s.DateTime)}; the credits it had reserved are released.`,
        );
    } catch {
      setError('The server could not be reached.');
    }
    list.reload();
  };

  return (
    <>
      <h1>Scheduled messages</h1>
      <p class="hint">Times are in the service's time zone. The list is read again every 5 seconds.</p>
      {writable && (
        <ScheduleForm
          api={api}
          onDone={(text) => {
            setDone(text);
            list.reload();
          }}
        />
      )}
      <p class="hint done" role="status" tabIndex={-1} ref={doneRef} data-testid="scheduled-done">
        {done ?? ''}
      </p>
      <ErrorLine error={list.error ?? error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No scheduled messages.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((s) => {
            const rule = s.Id === undefined ? undefined : rrules.get(s.Id);
            const reason = scheduledReason(s.Status_Id);
            const recurring = rule !== undefined && rule !== '';
            return (
              <li key={s.Id} class="card" data-testid="scheduled" data-id={s.Id}>
                <p>
                  <strong>To {phone(s.MobilePhone)}</strong> at <When value={s.DateTime} /> ({s.Type_Description})
                </p>
                {s.Type_Id === 2 && s.Subject !== '' && <p>Subject: {s.Subject}</p>}
                <p class="text">{s.Message}</p>
                <p data-status={s.Status_Description}>
                  <strong data-testid="scheduled-status">{s.Status_Description}</strong>
                  {reason !== '' && <span data-testid="scheduled-reason"> · {reason}</span>}
                </p>
                {recurring && (
                  <p data-testid="rrule">
                    Repeats: {describeRRule(rule) || 'a custom rule'} (<code>{rule}</code>); the time above is the next one.
                  </p>
                )}
                {editing !== undefined && editing === s.Id ? (
                  <EditScheduled
                    api={api}
                    id={editing}
                    onClose={(saved) => {
                      setEditing(undefined);
                      setVersion((n) => n + 1);
                      list.reload();
                      announce(saved ? `Saved the message to ${phone(s.MobilePhone)}: it is Pending until checked again.` : 'Edit closed.');
                    }}
                  />
                ) : (
                  writable && (
                    <div class="actions">
                      <button
                        type="button"
                        aria-label={`Edit message to ${phone(s.MobilePhone)} at ${formatDate(s.DateTime)}`}
                        onClick={() => setEditing(s.Id)}
                      >
                        Edit
                      </button>
                      <ConfirmButton
                        label="Cancel message"
                        ariaLabel={`Cancel message to ${phone(s.MobilePhone)} at ${formatDate(s.DateTime)}`}
                        question={`Cancel the message to ${phone(s.MobilePhone)} at ${formatDate(s.DateTime)}${
                          recurring ? ' and every later time it repeats' : ''
                        }? It will not be sent, and the credits it had reserved are released.`}
                        confirm="Yes, cancel it"
                        dismiss="Keep it"
                        onConfirm={() => cancel(s)}
                      />
                    </div>
                  )
                )}
              </li>
            );
          })}
        </ul>
      )}
      <Pager list={list} noun="scheduled messages" />
    </>
  );
}

/** A new scheduled SMS (sms/schedule): number, text, time and recurrence, with the preview of what the recipient gets. */
function ScheduleForm(props: { api: Api; onDone: (text: string) => void }) {
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [when, setWhen] = useState('');
  const [rrule, setRRule] = useState('');
  const [round, setRound] = useState(0);
  const form = useFormErrors(FIELDS, SEND_HELP);
  const over = tooLong(text);
  const preview = usePreview(props.api, to.trim() !== '' && text !== '' && !over ? { MobilePhone: to.trim(), Message: text } : undefined);
  return (
    <form
      class="compose card"
      aria-labelledby="schedule-title"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (over) return;
        const body = { MobilePhone: to, Message: text, DateTime: serviceDateTime(when), ...(rrule === '' ? {} : { RRule: rrule }) };
        void submitForm(
          () => props.api.call<WithRRule>('POST', '/v1/sms/schedule', { body }),
          form,
          (data) => {
            setText('');
            setRRule('');
            setRound((n) => n + 1);
            props.onDone(
              `Scheduled: to ${phone(data?.MobilePhone)} at ${formatDate(data?.DateTime)}, ${data?.Status_Description ?? 'Pending'}.`,
            );
          },
        );
      }}
    >
      <h2 id="schedule-title">Schedule one</h2>
      <label for="schedule-to">To (mobile number)</label>
      <input
        id="schedule-to"
        type="tel"
        autocomplete="off"
        value={to}
        {...form.aria('MobilePhone', 'schedule-to')}
        onInput={(e) => setTo(e.currentTarget.value)}
      />
      <FieldMessage form={form} field="MobilePhone" id="schedule-to" />
      <MessageField id="schedule-text" label="Message" rows={3} value={text} onInput={setText} counterId="schedule-counter" form={form} />
      <label for="schedule-when">Send at (service time zone)</label>
      <input
        id="schedule-when"
        type="datetime-local"
        step={1}
        value={when}
        {...form.aria('DateTime', 'schedule-when')}
        onInput={(e) => setWhen(e.currentTarget.value)}
      />
      <FieldMessage form={form} field="DateTime" id="schedule-when" />
      <RecurrenceField key={round} id="schedule-rrule" value={rrule} onChange={setRRule} form={form} />
      <FieldMessage form={form} field="Number" id="schedule-number" />
      <PreviewBox
        id="schedule-preview"
        state={preview}
        who={to.trim() === '' ? undefined : to.trim()}
        mms={false}
        hint={
          to.trim() === ''
            ? 'Enter a number to see the text as they will get it, and its cost.'
            : text === ''
              ? 'Write the text to see it as they will get it.'
              : over
                ? 'The text is over 1,600 characters.'
                : 'The preview shows once you stop typing.'
        }
      />
      <GeneralError form={form} />
      <button type="submit" disabled={over}>
        Schedule
      </button>
    </form>
  );
}

/**
 * Edits a scheduled message (sms/update-scheduled; it is then Pending again): its record is read
 * first (sms/view-scheduled, which holds its RRule), and only what changed is sent besides the
 * text, so an unchanged time keeps its seconds and an unchanged recurrence keeps its count.
 */
function EditScheduled(props: { api: Api; id: number; onClose: (saved: boolean) => void }) {
  const [record, setRecord] = useState<WithRRule | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [text, setText] = useState('');
  const [when, setWhen] = useState('');
  const [rrule, setRRule] = useState('');
  const form = useFormErrors(FIELDS, SEND_HELP);
  const id = String(props.id);
  const first = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let live = true;
    void props.api
      .call<WithRRule>('GET', '/v1/sms/view-scheduled', { query: { id } })
      .then(({ data, error, response }) => {
        if (!live) return;
        if (error !== undefined || data === undefined) return setLoadError(errorText(error, response.status));
        setRecord(data);
        setText(data.Message ?? '');
        setWhen(toLocalInput(data.DateTime));
        setRRule(data.RRule ?? '');
        requestAnimationFrame(() => first.current?.querySelector('textarea')?.focus());
      })
      .catch(() => live && setLoadError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [props.api, id]);
  if (loadError !== undefined) return <ErrorLine error={loadError} />;
  if (record === undefined) return <p role="status">Loading…</p>;
  const over = tooLong(text);
  return (
    <form
      class="compose"
      aria-label={`Edit scheduled ${id}`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (over) return;
        const body: Record<string, string> = { Message: text };
        if (when !== toLocalInput(record.DateTime)) body.DateTime = serviceDateTime(when);
        if (rrule !== (record.RRule ?? '')) body.RRule = rrule;
        void submitForm(
          () => props.api.call<WithRRule>('PATCH', '/v1/sms/update-scheduled', { query: { id }, body }),
          form,
          () => props.onClose(true),
        );
      }}
    >
      <div ref={first}>
        <MessageField
          id={`edit-text-${id}`}
          label="Message"
          rows={3}
          value={text}
          onInput={setText}
          counterId={`edit-counter-${id}`}
          counter={record.Type_Id !== 2}
          form={form}
        />
      </div>
      <label for={`edit-when-${id}`}>Send at (service time zone)</label>
      <input
        id={`edit-when-${id}`}
        type="datetime-local"
        step={1}
        value={when}
        {...form.aria('DateTime', `edit-when-${id}`)}
        onInput={(e) => setWhen(e.currentTarget.value)}
      />
      <FieldMessage form={form} field="DateTime" id={`edit-when-${id}`} />
      <RecurrenceField id={`edit-rrule-${id}`} value={rrule} onChange={setRRule} form={form} />
      <FieldMessage form={form} field="Number" id={`edit-number-${id}`} />
      <FieldMessage form={form} field="MobilePhone" id={`edit-to-${id}`} />
      <GeneralError form={form} />
      <div class="actions">
        <button type="submit" disabled={over}>
          Save
        </button>
        <button type="button" class="secondary" onClick={() => props.onClose(false)}>
          Close
        </button>
      </div>
    </form>
  );
}
