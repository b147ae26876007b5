/**
 * A group's members (docs/API.md §10.3): contacts/index with `GroupId`, paged in the URL's
 * `membersPage`; Add member by a number in any format (contacts/find) or a contact picked with a
 * server search; a number that is no contact yet is offered to be created and added
 * (contacts/create, then groups/add-contacts), never "Object not found"; Remove
 * (groups/remove-contacts) offers Undo (adding the same contact back is a true undo).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { placeHref } from '../route.ts';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { contactHelp } from './contact-form.tsx';
import { changeMembership, ContactPicker, contactName, phoneText, StatusLine, type Contact } from './contact-shared.tsx';

/** What contacts/find's messages mean on the number box (docs/API.md §10.2). */
const FIND_HELP: FieldHelp = {
  number: {
    'Number cannot be blank.': 'Enter a phone number, or choose one of your contacts.',
    'Number is invalid.':
      "This is not a phone number: write it with its country code, such as +1 202 555 0100 (a number without one is read in the service's region).",
  },
};

/** What an action did, with Undo when it can be undone. */
interface Status {
  text: string;
  stamp: number;
  undo?: () => void;
}

/** The members section of group `groupId` (`groupName` in the messages). */
export function GroupMembers(props: { api: Api; groupId: number; groupName: string; onChange: () => void }) {
  const { api, groupId } = props;
  const writable = api.can('groups:write');
  const list = usePagedList<Contact>(
    (page) => api.GET('/v1/contacts/index', { params: { query: { GroupId: String(groupId), page: String(page), 'per-page': '20' } } }),
    [api, groupId],
    { param: 'membersPage' },
  );
  const [status, setStatus] = useState<Status | undefined>();
  const [error, setError] = useState<string | undefined>();
  const say = (text: string, undo?: () => void) => setStatus({ text, stamp: Date.now(), ...(undo ? { undo } : {}) });
  const changed = () => {
    list.reload();
    props.onChange();
  };

  /** groups/add-contacts or groups/remove-contacts of `contact`; false (and the error line) when refused. */
  const change = async (action: 'add' | 'remove', contact: Contact): Promise<boolean> => {
    setError(undefined);
    const failed = await changeMembership(api, action, groupId, contact.Id ?? 0);
    if (failed !== undefined) {
      setError(failed);
      return false;
    }
    changed();
    return true;
  };

  /** Adds `contact`, saying so with Undo (which removes it again). */
  const added = async (contact: Contact, text?: string) => {
    const already = (contact.GroupIds ?? []).includes(groupId);
    if (already) return say(`${contactName(contact)} is already a member.`);
    if (!(await change('add', contact))) return;
    say(text ?? `Added ${contactName(contact)} to the group.`, () => {
      void change('remove', contact).then((done) => done && say(`${contactName(contact)} is no longer a member.`));
    });
  };

  return (
    <section class="card" aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      {writable && <AddMember api={api} groupName={props.groupName} onAdd={added} />}
      {status !== undefined && (
        <StatusLine text={status.text} stamp={status.stamp}>
          {status.undo !== undefined && (
            <>
              {' '}
              <button type="button" class="link" onClick={status.undo}>
                Undo
              </button>
            </>
          )}
        </StatusLine>
      )}
      <ErrorLine error={list.error ?? error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No members.</p>
      ) : (
        <ul class="members">
          {list.rows.map((c) => (
            <li key={c.Id} data-testid="member" data-number={c.Number}>
              <a href={placeHref('contacts', c.Id)} class="text">
                {contactName(c)}
              </a>{' '}
              {contactName(c) !== phoneText(c.Number) && <span class="nowrap">{phoneText(c.Number)}</span>}{' '}
              {c.OptedOut === 1 && <span class="hint">(opted out)</span>}{' '}
              {writable && (
                <button
                  type="button"
                  class="link"
                  aria-label={`Remove ${contactName(c)} from the group`}
                  onClick={() =>
                    void change('remove', c).then(
                      (done) =>
                        done &&
                        say(`Removed ${contactName(c)} from the group.`, () => {
                          void change('add', c).then((back) => back && say(`${contactName(c)} is a member again.`));
                        }),
                    )
                  }
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <Pager list={list} noun="members" />
    </section>
  );
}

/**
 * Add member: a number in any format, or a contact picked with a server search. A number that is
 * no contact yet: the offer to create the contact (with a name, optional) and add it.
 */
function AddMember(props: { api: Api; groupName: string; onAdd: (contact: Contact, text?: string) => Promise<void> }) {
  const { api } = props;
  const [number, setNumber] = useState('');
  const [picked, setPicked] = useState<Contact | undefined>();
  const [offer, setOffer] = useState<string | undefined>();
  const form = useFormErrors(['number'], FIND_HELP);

  async function add(event: Event) {
    event.preventDefault();
    form.clear();
    setOffer(undefined);
    if (picked !== undefined && number.trim() === '') {
      await props.onAdd(picked);
      setPicked(undefined);
      return;
    }
    if (number.trim() === '') return form.setGeneral('Enter a number, or choose one of your contacts.');
    try {
      const found = await api.GET('/v1/contacts/find', { params: { query: { number } } });
      if (found.response.status === 404) return setOffer(number.trim());
      if (found.error !== undefined || found.data === undefined) return form.set(found.error, found.response.status);
      await props.onAdd(found.data);
      setNumber('');
    } catch {
      form.setGeneral('The server could not be reached.');
    }
  }

  return (
    <>
      <form class="compose add-member" aria-label="Add a member" onSubmit={(e) => void add(e)}>
        <div>
          <label for="member-number">Number (any format)</label>
          <input
            id="member-number"
            type="tel"
            value={number}
            onInput={(e) => {
              setNumber(e.currentTarget.value);
              if (e.currentTarget.value !== '') setPicked(undefined);
            }}
            aria-describedby="member-number-hint"
            {...form.aria('number', 'member-number')}
          />
          <p class="hint" id="member-number-hint">
            A number that is no contact yet can be added as a new contact.
          </p>
          <FieldMessage form={form} field="number" id="member-number" />
        </div>
        <p class="or">or</p>
        <ContactPicker
          api={api}
          id="member-picker"
          value={picked === undefined ? '' : String(picked.Id)}
          onChange={(_, contact) => {
            setPicked(contact);
            if (contact !== undefined) setNumber('');
          }}
        />
        <GeneralError form={form} />
        <button type="submit">Add member</button>
      </form>
      {offer !== undefined && (
        <CreateAndAdd
          api={api}
          number={offer}
          groupName={props.groupName}
          onDone={async (contact) => {
            setOffer(undefined);
            setNumber('');
            if (contact !== undefined)
              await props.onAdd(
                contact,
                `Created contact ${contactName(contact)} (${phoneText(contact.Number)}) and added it to the group.`,
              );
            else document.getElementById('member-number')?.focus();
          }}
        />
      )}
    </>
  );
}

/** The offer for a number that is no contact: create the contact (contacts/create), then add it. */
function CreateAndAdd(props: { api: Api; number: string; groupName: string; onDone: (contact: Contact | undefined) => Promise<void> }) {
  const [first, setFirst] = useState('');
  const [last, setLast] = useState('');
  const form = useFormErrors(['Number', 'FirstName', 'LastName'], contactHelp(props.number));
  const question = useRef<HTMLParagraphElement>(null);
  // The offer replaces nothing, but it is the answer to Add member: it takes the focus, read out.
  useEffect(() => question.current?.focus(), [props.number]);
  return (
    <form
      class="compose confirm"
      aria-label="Create the contact"
      data-testid="create-offer"
      onSubmit={(e) => {
        e.preventDefault();
        void submitForm(
          () =>
            props.api.POST('/v1/contacts/create', {
              body: { Number: props.number, ...(first === '' ? {} : { FirstName: first }), ...(last === '' ? {} : { LastName: last }) },
            }),
          form,
          (created) => void props.onDone(created),
        );
      }}
    >
      <p tabIndex={-1} ref={question}>
        No contact has the number <span class="nowrap">{props.number}</span> yet. Create the contact and add it to {props.groupName}?
      </p>
      <FieldMessage form={form} field="Number" id="offer-number" />
      <label for="offer-first">First name (optional)</label>
      <input
        id="offer-first"
        autoComplete="given-name"
        value={first}
        onInput={(e) => setFirst(e.currentTarget.value)}
        {...form.aria('FirstName', 'offer-first')}
      />
      <FieldMessage form={form} field="FirstName" id="offer-first" />
      <label for="offer-last">Last name (optional)</label>
      <input
        id="offer-last"
        autoComplete="family-name"
        value={last}
        onInput={(e) => setLast(e.currentTarget.value)}
        {...form.aria('LastName', 'offer-last')}
      />
      <FieldMessage form={form} field="LastName" id="offer-last" />
      <GeneralError form={form} />
      <div class="actions">
        <button type="submit">Create the contact and add it</button>
        <button type="button" class="secondary" onClick={() => void props.onDone(undefined)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
