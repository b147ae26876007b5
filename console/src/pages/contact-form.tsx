/**
 * A contact's form, to create one (contacts/create) or edit one (contacts/update, only the fields
 * changed), and what the API's messages on its fields mean here (docs/API.md §10.2).
 */
import { useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp, type FormErrors } from './fields.tsx';
import { GroupPicker, phoneText, type Contact } from './contact-shared.tsx';

type ContactBody = components['schemas']['ContactBody'];

/** The text fields of the form, in the API's names, with their labels. */
const TEXT_FIELDS = [
  ['FirstName', 'First name', 'given-name'],
  ['LastName', 'Last name', 'family-name'],
  ['Email', 'Email', 'email'],
  ['City', 'City', 'address-level2'],
  ['Zip', 'Zip', 'postal-code'],
] as const;

/** Every field of the contact body the form shows (the 422's messages on others go to the general line). */
const FORM_FIELDS = ['Number', 'FirstName', 'LastName', 'City', 'Email', 'Zip', 'BirthDay', 'OptedOut', 'GroupIds'] as const;

/**
 * What the API's messages on a contact's fields mean on this form (docs/API.md §4.4, §10.2). The
 * "already taken" message quotes the number as it was sent: `sentNumber`.
 */
export function contactHelp(sentNumber: string): FieldHelp {
  const atMost = (label: string, what: string, max: number) => ({
    [`${label} should contain at most ${max} characters.`]: `${what} can have at most ${max} characters.`,
  });
  return {
    Number: {
      'Number cannot be blank.': "Enter the contact's phone number.",
      'Number is invalid.':
        "This is not a phone number: write it with its country code, such as +1 202 555 0100 (a number without one is read in the service's region).",
      [`Number "${sentNumber}" has already been taken.`]: 'Another contact already has this number. Search for it in the list to open it.',
    },
    FirstName: atMost('First Name', 'A first name', 255),
    LastName: atMost('Last Name', 'A last name', 255),
    City: atMost('City', 'A city', 255),
    Email: {
      'Email is not a valid email address.': 'Enter an email address such as name@example.com, or leave it empty.',
      ...atMost('Email', 'An email address', 255),
    },
    Zip: atMost('Zip', 'A zip or postal code', 32),
    BirthDay: { 'The format of Birth Day is invalid.': 'Enter a real date, or leave it empty.' },
    OptedOut: {
      'Opted Out can only be cleared by the contact texting START.':
        'Only the contact can opt back in, by texting START to one of your numbers.',
    },
    GroupIds: { 'Group Ids is invalid.': 'One of the chosen groups no longer exists: take it off the list and try again.' },
  };
}

/** The form's values: what the inputs hold. */
interface Values {
  Number: string;
  FirstName: string;
  LastName: string;
  Email: string;
  City: string;
  Zip: string;
  BirthDay: string;
  OptedOut: boolean;
}

/** A stored contact as the form's values (an unset birthday, `0000-00-00`, is empty). */
function valuesOf(c: Contact | undefined): Values {
  return {
    Number: phoneText(c?.Number),
    FirstName: c?.FirstName ?? '',
    LastName: c?.LastName ?? '',
    Email: c?.Email ?? '',
    City: c?.City ?? '',
    Zip: c?.Zip ?? '',
    BirthDay: c?.BirthDay === undefined || c.BirthDay.startsWith('0000') ? '' : c.BirthDay,
    OptedOut: c?.OptedOut === 1,
  };
}

/** The inputs of a contact's fields, each with its label and its error under it. */
function ContactInputs(props: { prefix: string; values: Values; set: (values: Values) => void; form: FormErrors; lockedOptOut: boolean }) {
  const { prefix, values, set, form } = props;
  const id = (field: string) => `${prefix}-${field}`;
  return (
    <div class="form-grid">
      <div>
        <label for={id('Number')}>Number</label>
        <input
          id={id('Number')}
          type="tel"
          autoComplete="tel"
          value={values.Number}
          onInput={(e) => set({ ...values, Number: e.currentTarget.value })}
          aria-required="true"
          {...form.aria('Number', id('Number'))}
        />
        <FieldMessage form={form} field="Number" id={id('Number')} />
      </div>
      {TEXT_FIELDS.map(([field, label, auto]) => (
        <div key={field}>
          <label for={id(field)}>{label}</label>
          <input
            id={id(field)}
            type={field === 'Email' ? 'email' : 'text'}
            autoComplete={auto}
            value={values[field]}
            onInput={(e) => set({ ...values, [field]: e.currentTarget.value })}
            {...form.aria(field, id(field))}
          />
          <FieldMessage form={form} field={field} id={id(field)} />
        </div>
      ))}
      <div>
        <label for={id('BirthDay')}>Birthday</label>
        <input
          id={id('BirthDay')}
          type="date"
          value={values.BirthDay}
          onInput={(e) => set({ ...values, BirthDay: e.currentTarget.value })}
          {...form.aria('BirthDay', id('BirthDay'))}
        />
        <FieldMessage form={form} field="BirthDay" id={id('BirthDay')} />
      </div>
      <div class="wide">
        <label class="check">
          <input
            type="checkbox"
            checked={values.OptedOut}
            disabled={props.lockedOptOut}
            onInput={(e) => set({ ...values, OptedOut: e.currentTarget.checked })}
            aria-describedby={`${id('OptedOut')}-hint`}
            {...form.aria('OptedOut', id('OptedOut'))}
          />
          Opted out
        </label>
        <p class="hint" id={`${id('OptedOut')}-hint`}>
          {props.lockedOptOut
            ? 'This contact opted out: only the contact can opt back in, by texting START.'
            : 'An opted-out contact gets no messages. Once saved, only the contact can undo it, by texting START.'}
        </p>
        <FieldMessage form={form} field="OptedOut" id={id('OptedOut')} />
      </div>
    </div>
  );
}

/** Creates a contact (contacts/create) with its fields and groups; `onCreated` gets the new contact. */
export function CreateContact(props: { api: Api; onCreated: (contact: Contact) => void }) {
  const [values, setValues] = useState<Values>(valuesOf(undefined));
  const [sentNumber, setSentNumber] = useState('');
  const [groups, setGroups] = useState<{ id: number; name: string }[]>([]);
  const [picked, setPicked] = useState<{ id: number; name: string } | undefined>();
  const form = useFormErrors(FORM_FIELDS, contactHelp(sentNumber));
  const canGroup = props.api.can('groups:read');

  return (
    <form
      class="compose card"
      noValidate
      aria-labelledby="new-contact-title"
      onSubmit={(e) => {
        e.preventDefault();
        const body: ContactBody = { Number: values.Number };
        for (const [field] of TEXT_FIELDS) if (values[field].trim() !== '') body[field] = values[field];
        if (values.BirthDay !== '') body.BirthDay = values.BirthDay;
        if (values.OptedOut) body.OptedOut = 1;
        if (groups.length > 0) body.GroupIds = groups.map((g) => g.id);
        setSentNumber(values.Number);
        void submitForm(
          () => props.api.POST('/v1/contacts/create', { body }),
          form,
          (created) => {
            if (created !== undefined) props.onCreated(created);
          },
        );
      }}
    >
      <h2 id="new-contact-title">Add a contact</h2>
      <ContactInputs prefix="new-contact" values={values} set={setValues} form={form} lockedOptOut={false} />
      {canGroup && (
        <fieldset class="plain group-choice">
          <legend>Groups (optional)</legend>
          {groups.length > 0 && (
            <ul class="chips" aria-label="Groups of the new contact">
              {groups.map((g) => (
                <li key={g.id}>
                  <span class="text">{g.name}</span>{' '}
                  <button
                    type="button"
                    class="link"
                    aria-label={`Take ${g.name} off the new contact's groups`}
                    onClick={() => setGroups(groups.filter((x) => x.id !== g.id))}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
          <GroupPicker
            api={props.api}
            id="new-contact-group"
            value={picked === undefined ? '' : String(picked.id)}
            onChange={(id, group) => setPicked(group === undefined ? undefined : { id: Number(id), name: group.Name ?? id })}
          />
          <button
            type="button"
            class="secondary"
            disabled={picked === undefined}
            onClick={() => {
              if (picked !== undefined && !groups.some((g) => g.id === picked.id)) setGroups([...groups, picked]);
              setPicked(undefined);
            }}
          >
            Add to the new contact's groups
          </button>
          <FieldMessage form={form} field="GroupIds" id="new-contact-GroupIds" />
        </fieldset>
      )}
      <GeneralError form={form} />
      <button type="submit">Add contact</button>
    </form>
  );
}

/**
 * Edits a contact (contacts/update): only the fields whose value changed are sent, so an unchanged
 * form saves nothing. An opt-out can be set, never cleared (docs/API.md §10.2).
 */
export function EditContact(props: { api: Api; contact: Contact; onSaved: (contact: Contact | undefined) => void; onCancel: () => void }) {
  const initial = valuesOf(props.contact);
  const [values, setValues] = useState<Values>(initial);
  const [sentNumber, setSentNumber] = useState('');
  const form = useFormErrors(FORM_FIELDS, contactHelp(sentNumber));
  const id = String(props.contact.Id);
  return (
    <form
      class="compose card"
      noValidate
      aria-label="Edit contact"
      onSubmit={(e) => {
        e.preventDefault();
        const body: ContactBody = {};
        if (values.Number !== initial.Number) body.Number = values.Number;
        for (const [field] of TEXT_FIELDS) if (values[field] !== initial[field]) body[field] = values[field];
        if (values.BirthDay !== initial.BirthDay) body.BirthDay = values.BirthDay;
        if (values.OptedOut && !initial.OptedOut) body.OptedOut = 1;
        if (Object.keys(body).length === 0) return props.onSaved(undefined);
        setSentNumber(values.Number);
        void submitForm(
          () => props.api.PATCH('/v1/contacts/update', { params: { query: { id } }, body }),
          form,
          (saved) => props.onSaved(saved ?? props.contact),
        );
      }}
    >
      <h2>Edit contact</h2>
      <ContactInputs prefix={`edit-contact-${id}`} values={values} set={setValues} form={form} lockedOptOut={initial.OptedOut} />
      <GeneralError form={form} />
      <div class="actions">
        <button type="submit">Save</button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
