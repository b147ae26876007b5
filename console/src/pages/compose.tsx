import { useEffect, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { textCost } from '../cost.ts';

type Contact = components['schemas']['Contact'];
type Group = components['schemas']['Group'];
type Template = components['schemas']['MmsTemplate'];
type Batch = components['schemas']['Batch'];

/** Statuses after which a message changes no more (docs/API.md §9.11). */
const FINAL = new Set([3, 4, 5, 6, 7]);

/** Loads the first page (100 records) of a list operation for a picker; [] on any error. */
function usePick<T>(load: () => Promise<{ data?: T[] }>): T[] {
  const [rows, setRows] = useState<T[]>([]);
  useEffect(() => {
    let live = true;
    load()
      .then(({ data }) => live && data !== undefined && setRows(data))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  return rows;
}

/** `YYYY-MM-DDTHH:MM` of a datetime-local input as `YYYY-MM-DD HH:MM:SS`, read in the service's time zone by sms/schedule (docs/API.md §10.6). */
function serviceTime(local: string): string {
  return `${local.replace('T', ' ')}:00`.slice(0, 19);
}

/**
 * Compose: an SMS or MMS (an MMS template) to a number (sms/send), a contact (sms/send with
 * PhoneNumberId) or a group (sms/send-group, whose batch's progress is shown until every message is
 * final), now or at a time in the service's time zone (sms/schedule, a number or a contact only);
 * docs/API.md §10.6. The counter uses the server's own segment rule (../cost.ts). Sending needs
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

function ComposeForm(props: { api: MsgsvcClient }) {
  const [kind, setKind] = useState<'number' | 'contact' | 'group'>('number');
  const [to, setTo] = useState('');
  const [contactId, setContactId] = useState('');
  const [groupId, setGroupId] = useState('');
  const [type, setType] = useState<'1' | '2'>('1');
  const [templateId, setTemplateId] = useState('');
  const [when, setWhen] = useState<'now' | 'later'>('now');
  const [at, setAt] = useState('');
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [batch, setBatch] = useState<Batch | undefined>();
  const contacts = usePick<Contact>(() => props.api.GET('/v1/contacts/index', { params: { query: { 'per-page': '100' } } }));
  const groups = usePick<Group>(() => props.api.GET('/v1/groups/index', { params: { query: { 'per-page': '100' } } }));
  const templates = usePick<Template>(() => props.api.GET('/v1/mms-templates/index', { params: { query: { 'per-page': '100' } } }));
  const scheduled = when === 'later' && kind !== 'group';

  async function send(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setBatch(undefined);
    const content = type === '2' ? { Type_Id: 2, MmsTemplateId: templateId, Message: text } : { Message: text };
    try {
      if (kind === 'group') {
        const { data, error, response } = await props.api.POST('/v1/sms/send-group', { body: { GroupId: groupId, ...content } });
        if (error !== undefined) return setError(errorText(error, response.status));
        return setBatch(data);
      }
      const contact = contacts.find((c) => String(c.Id) === contactId);
      if (scheduled) {
        const phone = kind === 'contact' ? (contact?.Number ?? '') : to;
        const { error, response } = await props.api.POST('/v1/sms/schedule', {
          body: { MobilePhone: phone, DateTime: at === '' ? '' : serviceTime(at), ...content },
        });
        if (error !== undefined) return setError(errorText(error, response.status));
        location.hash = '#/scheduled';
        return;
      }
      const recipient = kind === 'contact' ? { PhoneNumberId: contactId } : { MobilePhone: to };
      const { data, error, response } = await props.api.POST('/v1/sms/send', { body: { ...recipient, ...content } });
      if (error !== undefined) return setError(errorText(error, response.status));
      const id = data[0]?.Id;
      location.hash = id === undefined ? '#/messages' : `#/messages/${id}`;
    } catch {
      setError('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <h1>Compose</h1>
      <form class="compose" onSubmit={(e) => void send(e)}>
        <label for="kind">Send to</label>
        <select id="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as typeof kind)}>
          <option value="number">A number</option>
          <option value="contact">A contact</option>
          <option value="group">A group</option>
        </select>
        {kind === 'number' && (
          <>
            <label for="to">To (mobile number)</label>
            <input id="to" name="to" type="tel" autocomplete="off" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
          </>
        )}
        {kind === 'contact' && (
          <>
            <label for="contact">Contact</label>
            <select id="contact" value={contactId} onChange={(e) => setContactId(e.currentTarget.value)}>
              <option value="">Choose a contact</option>
              {contacts.map((c) => (
                <option key={c.Id} value={String(c.Id)}>
                  {`${c.FirstName ?? ''} ${c.LastName ?? ''}`.trim() || c.Number} ({c.Number})
                </option>
              ))}
            </select>
          </>
        )}
        {kind === 'group' && (
          <>
            <label for="group">Group</label>
            <select id="group" value={groupId} onChange={(e) => setGroupId(e.currentTarget.value)}>
              <option value="">Choose a group</option>
              {groups.map((g) => (
                <option key={g.Id} value={String(g.Id)}>
                  {g.Name}
                </option>
              ))}
            </select>
          </>
        )}
        <label for="type">Type</label>
        <select id="type" value={type} onChange={(e) => setType(e.currentTarget.value as typeof type)}>
          <option value="1">SMS</option>
          <option value="2">MMS</option>
        </select>
        {type === '2' && (
          <>
            <label for="template">MMS template</label>
            <select id="template" value={templateId} onChange={(e) => setTemplateId(e.currentTarget.value)}>
              <option value="">Choose a template</option>
              {templates.map((m) => (
                <option key={m.Id} value={String(m.Id)}>
                  {m.Name}
                </option>
              ))}
            </select>
          </>
        )}
        <label for="text">Message</label>
        <textarea id="text" name="text" rows={5} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        {type === '1' && <CostLine text={text} />}
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
            <input id="at" name="at" type="datetime-local" value={at} onInput={(e) => setAt(e.currentTarget.value)} />
          </>
        )}
        {kind === 'group' && <p class="hint">A group is sent now; a time can be set for a number or a contact.</p>}
        {error !== undefined && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : scheduled ? 'Schedule' : 'Send now'}
        </button>
      </form>
      {batch !== undefined && <BatchProgress api={props.api} batch={batch} />}
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
    <section aria-labelledby="batch-title">
      <h2 id="batch-title">Batch {props.batch.Id}</h2>
      <p>
        {total} queued, {props.batch.Skipped ?? 0} skipped (opted out), {props.batch.Credits ?? 0} credits.
      </p>
      <label for="batch-progress">Final messages</label>
      <progress id="batch-progress" max={Math.max(1, total)} value={final} />
      <p data-testid="batch-progress" aria-live="polite">
        {final === total ? 'Done' : 'Sending'}: {final} of {total} final
        {[...counts].map(([status, n]) => ` · ${n} ${status}`).join('')}
      </p>
    </section>
  );
}

/** The counter under a text: characters in its encoding, segments and credits, by ../cost.ts (the server's own rule). */
export function CostLine(props: { text: string }) {
  const cost = textCost(props.text);
  return (
    <p class="hint" id="counter" data-testid="counter" aria-live="polite">
      {cost.units} {cost.encoding === 'GSM-7' ? 'GSM-7 characters' : 'UCS-2 characters'} · {cost.segments}{' '}
      {cost.segments === 1 ? 'segment' : 'segments'} · {cost.credits} {cost.credits === 1 ? 'credit' : 'credits'}
      {cost.personalised && " · before merge fields: each recipient's values add to it"}
    </p>
  );
}
