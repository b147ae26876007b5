import { useEffect, useRef, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { go, placeHref } from '../route.ts';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp, type FormErrors } from './fields.tsx';
import type { PageAnswer } from './list.tsx';
import { SearchPicker } from './picker.tsx';
import { formatDate, serviceDateTime } from './ui.tsx';
import { MessageField, tooLong } from './compose-text.tsx';
import { credits, PreviewBox, TemplateInfo, usePreview, type PreviewBody } from './compose-preview.tsx';
import { describeRRule, RecurrenceField } from './compose-rrule.tsx';

type Contact = components['schemas']['Contact'];
type Group = components['schemas']['Group'];
type Template = components['schemas']['MmsTemplate'];
type Batch = components['schemas']['Batch'];
type NumberRow = components['schemas']['Number'];
type Scheduled = components['schemas']['ScheduledSingleMessageWithRRule'];

/** Statuses after which a message changes no more (docs/API.md §9.11). */
const FINAL = new Set([3, 4, 5, 6, 7]);

/** Rows a picker shows at a time: the rest are found by typing (a server search). */
const PICKER_PAGE = '20';

/** The API fields of the compose form, each shown next to its control. */
const FIELDS = ['MobilePhone', 'PhoneNumberId', 'GroupId', 'Number', 'Type_Id', 'MmsTemplateId', 'Subject', 'Message', 'DateTime', 'RRule'];

/**
 * What the API's messages mean on this form (docs/API.md §10.6, §14.3.3); the API's words are
 * shown too, exactly. Shared with the scheduled page's forms.
 */
export const SEND_HELP: FieldHelp = {
  MobilePhone: {
    'Mobile Phone cannot be blank.': 'Enter the mobile number to send to, or choose a contact.',
    'Mobile Phone is invalid.': 'This is not a phone number: write it with its country code, e.g. +1 202 555 0142.',
    'Mobile Phone has opted out.': 'This person texted STOP: nothing can be sent to them until they text START.',
  },
  PhoneNumberId: {
    'Phone Number Id is invalid.': 'That contact no longer exists: choose another one.',
    'Phone Number Id has opted out.': 'This contact texted STOP: nothing can be sent to them until they text START.',
  },
  GroupId: {
    'Group Id cannot be blank.': 'Choose a group.',
    'Group Id is invalid.': 'That group no longer exists: choose another one.',
  },
  Number: {
    'Number is invalid.':
      'The number in "From" cannot send: it is not Active (inactive or blocked) or no longer the account\'s, or the account has no Active number. Choose an Active number, or the default.',
  },
  MmsTemplateId: {
    'Mms Template Id cannot be blank.': 'Choose an MMS template.',
    'Mms Template Id is invalid.': 'That template no longer exists: choose another one.',
  },
  Message: {
    'Message cannot be blank.': 'Write the text to send.',
    'Message should contain at most 1,600 characters.': 'Shorten the text to 1,600 characters at most.',
  },
  DateTime: {
    'Date Time is invalid.': 'Choose a time in the future, at most 366 days ahead.',
    'The format of Date Time is invalid.': 'Enter a whole date and time.',
    'Date Time cannot be blank.': 'Choose when to send it.',
  },
  RRule: {
    'R Rule is invalid.':
      'The repeat rule is not one the API takes (FREQ with INTERVAL, BYDAY, BYMONTHDAY, COUNT or UNTIL), or it never comes again after the first time (an end before it).',
  },
};

/** A contact's name and number, as a picker or a preview names it. */
export function contactLabel(c: Contact): string {
  const name = `${c.FirstName ?? ''} ${c.LastName ?? ''}`.trim();
  return `${name === '' ? `+${c.Number ?? ''}` : `${name} (+${c.Number ?? ''})`}${c.OptedOut === 1 ? ' · opted out' : ''}`;
}

/** One page of a list operation for a picker, searched on the server (`Search`, docs/API.md §10.2). */
function searchList<T>(api: Api, path: `/v1/${string}`, text: string): Promise<PageAnswer<T>> {
  return api.call<T[]>('GET', path, { query: { 'per-page': PICKER_PAGE, ...(text === '' ? {} : { Search: text }) } });
}

/**
 * Compose: an SMS or MMS (an MMS template) to a number, a contact (sms/send with PhoneNumberId) or
 * a group (sms/send-group, whose batch's progress is shown until every message is final), now or
 * at a time in the service's time zone, once or repeating (sms/schedule with RRule, a number or a
 * contact only); docs/API.md §10.6, §14.3. The pickers search on the server. The counter uses the
 * server's own segment rule (../cost.ts) and warns at once past 1,600 characters; the preview
 * (sms/preview) shows the text as the first recipient will get it and its cost. Sending needs
 * `sms:write`: without it the page says so and shows no form.
 */
export function Compose(props: { api: Api }) {
  if (!props.api.can('sms:write'))
    return (
      <>
        <h1>Compose</h1>
        <p>Your role can read messages but not send them. Ask an admin of the account for the member role.</p>
      </>
    );
  return <ComposeForm api={props.api} />;
}

/** What a successful send or schedule left to show. */
type Result = { kind: 'batch'; batch: Batch } | { kind: 'scheduled'; record: Scheduled };

/** The first member of a group who can receive (not opted out), and how many can. */
interface GroupReach {
  first: Contact | undefined;
  count: number;
}

function ComposeForm(props: { api: Api }) {
  const { api } = props;
  const [kind, setKind] = useState<'number' | 'contact' | 'group'>('number');
  const [to, setTo] = useState('');
  const [contact, setContact] = useState<Contact | undefined>();
  const [group, setGroup] = useState<Group | undefined>();
  const [reach, setReach] = useState<GroupReach | undefined>();
  const [from, setFrom] = useState('');
  const [type, setType] = useState<'1' | '2'>('1');
  const [template, setTemplate] = useState<Template | undefined>();
  const [when, setWhen] = useState<'now' | 'later'>('now');
  const [at, setAt] = useState('');
  const [rrule, setRRule] = useState('');
  const [text, setText] = useState('');
  const [priority, setPriority] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<Result | undefined>();
  // A new key after a send gives fresh pickers and recurrence builder (their own state is cleared).
  const [round, setRound] = useState(0);
  const form = useFormErrors(FIELDS, SEND_HELP);
  const resultRef = useRef<HTMLElement>(null);
  const numbers = useNumbers(api);
  const scheduled = when === 'later' && kind !== 'group';
  const mms = type === '2';

  // The members a group send reaches, and the first of them for the preview.
  useEffect(() => {
    setReach(undefined);
    if (group?.Id === undefined) return;
    let live = true;
    void api
      .call<Contact[]>('GET', '/v1/contacts/index', { query: { GroupId: String(group.Id), OptedOut: '0', 'per-page': '1' } })
      .then(({ data, response }) => {
        if (live && data !== undefined)
          setReach({ first: data[0], count: Number(response.headers.get('X-Pagination-Total-Count') ?? data.length) });
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [api, group?.Id]);

  // The result takes the focus: the Send button was disabled while sending, and a screen reader hears what happened.
  useEffect(() => {
    if (result !== undefined) resultRef.current?.focus();
  }, [result]);

  const recipient: PreviewBody | undefined =
    kind === 'number'
      ? to.trim() === ''
        ? undefined
        : { MobilePhone: to.trim() }
      : kind === 'contact'
        ? contact?.Id === undefined
          ? undefined
          : { PhoneNumberId: contact.Id }
        : reach?.first?.Id === undefined
          ? undefined
          : { PhoneNumberId: reach.first.Id };
  const who =
    kind === 'number'
      ? to.trim() === ''
        ? undefined
        : to.trim()
      : kind === 'contact'
        ? contact === undefined
          ? undefined
          : contactLabel(contact)
        : reach?.first === undefined
          ? undefined
          : `${contactLabel(reach.first)}, the first of ${reach.count} ${reach.count === 1 ? 'recipient' : 'recipients'}`;
  const over = tooLong(text);
  // Send is disabled only for a text the API surely refuses; anything else missing, the API names (next to its field).
  const why = over ? 'The text is over 1,600 characters.' : undefined;
  const missing =
    mms && template === undefined
      ? 'Choose an MMS template to see its cost.'
      : !mms && text === ''
        ? 'Write the text to see it as they will get it.'
        : undefined;
  const content: PreviewBody = mms
    ? { Type_Id: 2, MmsTemplateId: template?.Id ?? '', ...(text === '' ? {} : { Message: text }) }
    : { Message: text };
  const numberPart: PreviewBody = from === '' ? {} : { Number: from };
  // Priority 1 (docs/API.md §17.2): ahead of every message waiting at the normal priority.
  const priorityPart = priority ? { Priority: 1 } : {};
  const preview = usePreview(
    api,
    recipient !== undefined && why === undefined && missing === undefined ? { ...recipient, ...numberPart, ...content } : undefined,
  );

  const clear = () => {
    setText('');
    setTemplate(undefined);
    setRRule('');
    setAt('');
    setRound((n) => n + 1);
  };

  async function send(event: Event) {
    event.preventDefault();
    if (why !== undefined || busy) return;
    setBusy(true);
    if (kind === 'group') {
      await submitForm(
        () => api.POST('/v1/sms/send-group', { body: { GroupId: String(group?.Id ?? ''), ...numberPart, ...priorityPart, ...content } }),
        form,
        (data) => {
          clear();
          if (data !== undefined) setResult({ kind: 'batch', batch: data });
        },
      );
    } else if (scheduled) {
      const phone = kind === 'contact' ? (contact?.Number === undefined ? '' : `+${contact.Number}`) : to;
      const body = {
        MobilePhone: phone,
        DateTime: serviceDateTime(at),
        ...(rrule === '' ? {} : { RRule: rrule }),
        ...(mms && template?.Subject ? { Subject: template.Subject } : {}),
        ...numberPart,
        ...priorityPart,
        ...content,
      };
      await submitForm(
        () => api.call<Scheduled>('POST', '/v1/sms/schedule', { body }),
        form,
        (data) => {
          clear();
          if (data !== undefined) setResult({ kind: 'scheduled', record: data });
        },
      );
    } else {
      const to1 = kind === 'contact' ? { PhoneNumberId: String(contact?.Id ?? '') } : { MobilePhone: to };
      // A single message's result is its own page, which follows it until its status is final.
      await submitForm(
        () => api.POST('/v1/sms/send', { body: { ...to1, ...numberPart, ...priorityPart, ...content } }),
        form,
        (data) => {
          clear();
          const id = data?.[0]?.Id;
          go(id === undefined ? '#/messages' : placeHref('messages', id));
        },
      );
    }
    setBusy(false);
  }

  return (
    <>
      <h1>Compose</h1>
      <form class="compose" noValidate onSubmit={(e) => void send(e)}>
        <label for="kind">Send to</label>
        <select
          id="kind"
          value={kind}
          onChange={(e) => {
            setKind(e.currentTarget.value as typeof kind);
            form.clear();
          }}
        >
          <option value="number">A number</option>
          <option value="contact">A contact</option>
          <option value="group">A group</option>
        </select>
        {kind === 'number' && (
          <>
            <label for="to">To (mobile number)</label>
            <input
              id="to"
              name="to"
              type="tel"
              autocomplete="off"
              value={to}
              {...form.aria('MobilePhone', 'to')}
              onInput={(e) => setTo(e.currentTarget.value)}
            />
          </>
        )}
        {kind === 'contact' && (
          <SearchPicker<Contact>
            key={`contact-${round}`}
            id="contact"
            label="Contact"
            noun="contacts"
            search={(q) => searchList<Contact>(api, '/v1/contacts/index', q)}
            option={(c) => ({ value: String(c.Id), label: contactLabel(c) })}
            value={contact?.Id === undefined ? '' : String(contact.Id)}
            onChange={(_, row) => setContact(row)}
          />
        )}
        {kind === 'group' && (
          <>
            <SearchPicker<Group>
              id="group"
              label="Group"
              noun="groups"
              search={(q) => searchList<Group>(api, '/v1/groups/index', q)}
              option={(g) => ({ value: String(g.Id), label: g.Name ?? '' })}
              value={group?.Id === undefined ? '' : String(group.Id)}
              onChange={(_, row) => setGroup(row)}
            />
            {group !== undefined && reach !== undefined && (
              <p class="hint" data-testid="group-reach">
                {group.Name}: {reach.count} {reach.count === 1 ? 'member' : 'members'} who can receive it (opted-out members are skipped).
              </p>
            )}
          </>
        )}
        <FieldMessage form={form} field="MobilePhone" id={kind === 'number' ? 'to' : kind} />
        <FieldMessage form={form} field="PhoneNumberId" id={`${kind}-contact`} />
        <FieldMessage form={form} field="GroupId" id={`${kind}-group`} />
        {numbers !== undefined && <FromField numbers={numbers} value={from} onChange={setFrom} form={form} />}
        <label for="type">Type</label>
        <select id="type" value={type} {...form.aria('Type_Id', 'type')} onChange={(e) => setType(e.currentTarget.value as typeof type)}>
          <option value="1">SMS</option>
          <option value="2">MMS</option>
        </select>
        <FieldMessage form={form} field="Type_Id" id="type" />
        {mms && (
          <>
            <SearchPicker<Template>
              key={`template-${round}`}
              id="template"
              label="MMS template"
              noun="templates"
              search={(q) => searchList<Template>(api, '/v1/mms-templates/index', q)}
              option={(m) => ({ value: String(m.Id), label: m.Name ?? '' })}
              value={template?.Id === undefined ? '' : String(template.Id)}
              onChange={(_, row) => setTemplate(row)}
            />
            <FieldMessage form={form} field="MmsTemplateId" id="template" />
            <FieldMessage form={form} field="Subject" id="template-subject" />
            {template !== undefined && <TemplateInfo template={template} text={preview.preview?.Message} />}
          </>
        )}
        <MessageField
          id="text"
          label={mms ? 'Message (for the log; the phone shows the template)' : 'Message'}
          value={text}
          onInput={setText}
          counter={!mms}
          form={form}
        />
        <label for="when">When</label>
        <select id="when" value={when} onChange={(e) => setWhen(e.currentTarget.value as typeof when)}>
          <option value="now">Now</option>
          <option value="later" disabled={kind === 'group'}>
            At a time
          </option>
        </select>
        {scheduled && (
          <>
            <label for="at">Date and time (the service's time zone)</label>
            <input
              id="at"
              name="at"
              type="datetime-local"
              step={1}
              value={at}
              {...form.aria('DateTime', 'at')}
              onInput={(e) => setAt(e.currentTarget.value)}
            />
            <FieldMessage form={form} field="DateTime" id="at" />
            <RecurrenceField key={`rrule-${round}`} id="rrule" value={rrule} onChange={setRRule} form={form} />
          </>
        )}
        {kind === 'group' && <p class="hint">A group is sent now; a time can be set for a number or a contact.</p>}
        <label class="check">
          <input
            id="priority"
            type="checkbox"
            checked={priority}
            aria-describedby="priority-hint"
            {...form.aria('Priority', 'priority')}
            onInput={(e) => setPriority(e.currentTarget.checked)}
          />
          Send first (Priority 1)
        </label>
        <p class="hint" id="priority-hint">
          For one-time codes and alerts: it goes to the carrier before every message waiting at the normal priority.
        </p>
        <FieldMessage form={form} field="Priority" id="priority" />
        <PreviewBox
          id="compose-preview"
          state={preview}
          who={who}
          mms={mms}
          hint={
            recipient === undefined
              ? 'Choose a recipient to see the text as they will get it, and its cost.'
              : (why ?? missing ?? 'The preview shows once you stop typing.')
          }
        />
        <GeneralError form={form} />
        <div class="actions">
          <button type="submit" disabled={busy || why !== undefined} aria-describedby={why === undefined ? undefined : 'send-why'}>
            {busy ? 'Sending…' : scheduled ? 'Schedule' : 'Send now'}
          </button>
        </div>
        {why !== undefined && (
          <p class="hint" id="send-why" data-testid="send-why">
            {why}
          </p>
        )}
      </form>
      {result !== undefined && (
        <section class="card result" tabIndex={-1} ref={resultRef} aria-labelledby="result-title" data-testid="send-result">
          {result.kind === 'batch' ? (
            <>
              <h2 id="result-title">Batch {result.batch.Id} queued</h2>
              <p role="status">
                {result.batch.Recipients ?? 0} {result.batch.Recipients === 1 ? 'recipient' : 'recipients'}, {result.batch.Skipped ?? 0}{' '}
                skipped (opted out), {credits(result.batch.Credits)}.
              </p>
              <p>
                <a href={placeHref('messages', undefined, { BatchId: String(result.batch.Id) })}>See the batch in the log</a>
              </p>
              <BatchProgress api={api} batch={result.batch} />
            </>
          ) : (
            <>
              <h2 id="result-title">Scheduled for {formatDate(result.record.DateTime)}</h2>
              <p role="status">
                Number {result.record.Id} to +{result.record.MobilePhone}: {result.record.Status_Description}
                {result.record.RRule ? `; repeats: ${describeRRule(result.record.RRule) || result.record.RRule}` : ''}.
              </p>
              <p>
                <a href="#/scheduled">See the scheduled list</a>
              </p>
            </>
          )}
        </section>
      )}
    </>
  );
}

/** The account's numbers (numbers/index, first 100) when the credential may read them; undefined otherwise. */
function useNumbers(api: Api): NumberRow[] | undefined {
  const [rows, setRows] = useState<NumberRow[] | undefined>();
  useEffect(() => {
    if (!api.can('numbers:read')) return;
    let live = true;
    void api
      .GET('/v1/numbers/index', { params: { query: { 'per-page': '100' } } })
      .then(({ data }) => live && data !== undefined && setRows(data))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [api]);
  return rows;
}

/** "From": the account's number a message goes from; only Active ones can be chosen, the others say why not. */
export function FromField(props: {
  numbers: NumberRow[];
  value: string;
  onChange: (value: string) => void;
  form: FormErrors;
  id?: string;
}) {
  const id = props.id ?? 'from';
  return (
    <>
      <label for={id}>From (your number)</label>
      <select id={id} value={props.value} {...props.form.aria('Number', id)} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">The account's default (its first Active number, or its sender pool's choice)</option>
        {props.numbers.map((n) => (
          <option key={n.Number} value={n.Number} disabled={n.Status_Id !== 0}>
            {(n.Number ?? '').length > 6 ? `+${n.Number}` : n.Number}
            {n.Status_Id === 0 ? '' : ` · ${n.Status_Description ?? ''} Cannot send.`}
          </option>
        ))}
      </select>
      <FieldMessage form={props.form} field="Number" id={id} />
    </>
  );
}

/**
 * A send-group batch's progress: its messages (sms/index?BatchId=, docs/API.md §10.6) counted by
 * status, asked again every 2 seconds until every one is final.
 */
function BatchProgress(props: { api: MsgsvcClient; batch: Batch }) {
  const total = props.batch.Recipients ?? 0;
  const [counts, setCounts] = useState<Map<string, number>>(new Map());
  const [final, setFinal] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      const seen = new Map<string, number>();
      let done = 0;
      for (let page = 1; ; page++) {
        const { data, response } = await props.api.GET('/v1/sms/index', {
          params: { query: { BatchId: String(props.batch.Id), page: String(page), 'per-page': '100' } },
        });
        if (!live || data === undefined) return;
        for (const m of data) {
          const status = m.Status_Description ?? '';
          seen.set(status, (seen.get(status) ?? 0) + 1);
          if (FINAL.has(m.Status_Id ?? 0)) done++;
        }
        if (page >= Number(response.headers.get('X-Pagination-Page-Count') ?? 1)) break;
      }
      setCounts(seen);
      setFinal(done);
      if (done < total) timer = setTimeout(() => void load().catch(() => undefined), 2000);
    };
    void load().catch(() => undefined);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [props.api, props.batch.Id]);
  return (
    <>
      <label for="batch-progress">Final so far</label>
      <progress id="batch-progress" max={Math.max(1, total)} value={final} />
      <p data-testid="batch-progress" aria-live="polite">
        {final === total ? 'Done' : 'Sending'}: {final} of {total} final
        {[...counts].map(([status, n]) => ` · ${n} ${status}`).join('')}
      </p>
    </>
  );
}
