import { useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { ConfirmButton, When } from './ui.tsx';
import { count, StatusLine } from './contact-shared.tsx';

type CustomField = components['schemas']['CustomField'];

/** What the API's messages on a field's name mean here; the "taken" message quotes the name as sent. */
function nameHelp(sent: string): FieldHelp {
  return {
    fname: {
      'Fname cannot be blank.': 'Give the field a name.',
      'Fname should contain at least 3 characters.': 'A field name needs at least 3 characters.',
      'Fname should contain at most 64 characters.': 'A field name can have at most 64 characters.',
      [`Fname "${sent}" has already been taken.`]: 'Another field already has this name (names are compared without regard to case).',
    },
  };
}

/**
 * The account's custom contact fields (docs/API.md §10.4, `#/fields`): the list
 * (custom-contact-fields/index, paged in the URL) with how many contacts have a value for each,
 * a form to add one (…/create, `fname`), Rename (…/update) and Delete (…/delete, asked first:
 * every contact's value for it goes too). A contact's values are set on the contact's page.
 */
export function CustomFields(props: { api: Api }) {
  const { api } = props;
  const writable = api.can('fields:write');
  const list = usePagedList<CustomField>(
    (page) => api.GET('/v1/custom-contact-fields/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [api],
  );
  const [status, setStatus] = useState<{ text: string; stamp: number } | undefined>();
  const say = (text: string) => setStatus({ text, stamp: Date.now() });

  return (
    <>
      <h1>Custom fields</h1>
      <p class="hint">
        A custom field is one more thing to know about every contact (a membership level, a shoe size). Each contact's value is set on the
        contact's page or by a CSV import (a column named like the field), and messages can use it as <code>{'{Field:Name}'}</code>.
      </p>
      {writable && (
        <CreateField
          api={api}
          onCreated={(name) => {
            say(`Added field ${name}.`);
            list.reload();
          }}
        />
      )}
      {status !== undefined && <StatusLine text={status.text} stamp={status.stamp} />}
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No custom fields yet.</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((f) => (
            <FieldCard
              key={f.Id}
              api={api}
              field={f}
              writable={writable}
              onRenamed={(name) => {
                say(`Renamed to ${name}.`);
                list.reload();
              }}
              onDeleted={(text) => {
                say(text);
                list.reload();
              }}
            />
          ))}
        </ul>
      )}
      <Pager list={list} noun="custom fields" />
    </>
  );
}

/** The form to add a field (custom-contact-fields/create). */
function CreateField(props: { api: Api; onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [sent, setSent] = useState('');
  const form = useFormErrors(['fname'], nameHelp(sent));
  return (
    <form
      class="compose card"
      aria-labelledby="new-field-title"
      onSubmit={(e) => {
        e.preventDefault();
        setSent(name);
        void submitForm(
          () => props.api.POST('/v1/custom-contact-fields/create', { body: { fname: name } }),
          form,
          () => {
            props.onCreated(name);
            setName('');
          },
        );
      }}
    >
      <h2 id="new-field-title">Add a custom field</h2>
      <label for="new-field-name">Field name</label>
      <input
        id="new-field-name"
        value={name}
        maxLength={64}
        aria-required="true"
        onInput={(e) => setName(e.currentTarget.value)}
        {...form.aria('fname', 'new-field-name')}
      />
      <FieldMessage form={form} field="fname" id="new-field-name" />
      <GeneralError form={form} />
      <button type="submit">Add field</button>
    </form>
  );
}

/** One field: its name, how many contacts have a value, its dates, Rename and Delete. */
function FieldCard(props: {
  api: Api;
  field: CustomField;
  writable: boolean;
  onRenamed: (name: string) => void;
  onDeleted: (text: string) => void;
}) {
  const { api, field } = props;
  const name = field.Name ?? '';
  const values = (field.Value ?? []).length;
  const [renaming, setRenaming] = useState(false);
  const [draft, setDraft] = useState(name);
  const [sent, setSent] = useState('');
  const [error, setError] = useState<string | undefined>();
  const form = useFormErrors(['fname'], nameHelp(sent));
  const inputId = `field-name-${field.Id}`;
  return (
    <li class="card" data-testid="field" data-name={name}>
      <p>
        <strong class="text">{name}</strong>
      </p>
      <p>{values === 0 ? 'No contact has a value yet.' : `${count(values, 'contact has', 'contacts have')} a value.`}</p>
      <p class="hint">
        Created <When value={field.DateCreated} />, updated <When value={field.DateUpdated} />. In a message:{' '}
        <code>{`{Field:${name}}`}</code>
      </p>
      <ErrorLine error={error} />
      {props.writable &&
        (renaming ? (
          <form
            class="compose"
            aria-label={`Rename ${name}`}
            onSubmit={(e) => {
              e.preventDefault();
              setSent(draft);
              void submitForm(
                () => api.PUT('/v1/custom-contact-fields/update', { params: { query: { id: String(field.Id) } }, body: { fname: draft } }),
                form,
                () => {
                  setRenaming(false);
                  props.onRenamed(draft);
                },
              );
            }}
          >
            <label for={inputId}>New name</label>
            <input
              id={inputId}
              value={draft}
              maxLength={64}
              onInput={(e) => setDraft(e.currentTarget.value)}
              {...form.aria('fname', inputId)}
            />
            <FieldMessage form={form} field="fname" id={inputId} />
            <GeneralError form={form} />
            <div class="actions">
              <button type="submit">Save</button>
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setRenaming(false);
                  form.clear();
                  requestAnimationFrame(() => document.getElementById(`rename-${field.Id}`)?.focus());
                }}
              >
                Cancel
              </button>
            </div>
          </form>
        ) : (
          <div class="actions">
            <button
              type="button"
              id={`rename-${field.Id}`}
              aria-label={`Rename ${name}`}
              onClick={() => {
                setDraft(name);
                setRenaming(true);
                requestAnimationFrame(() => document.getElementById(inputId)?.focus());
              }}
            >
              Rename
            </button>
            <ConfirmButton
              label="Delete"
              ariaLabel={`Delete ${name}`}
              question={`Delete custom field “${name}”? Every contact's value for it goes too (${count(values, 'value')} now), and messages using {Field:${name}} then get an empty value. This cannot be undone.`}
              confirm="Delete field"
              onConfirm={async () => {
                setError(undefined);
                try {
                  const { error, response } = await api.DELETE('/v1/custom-contact-fields/delete', {
                    params: { query: { id: String(field.Id) } },
                  });
                  if (error !== undefined || !response.ok) return setError(errorText(error, response.status));
                  props.onDeleted(`Deleted field ${name} and its ${count(values, 'value')}.`);
                } catch {
                  setError('The server could not be reached.');
                }
              }}
            />
          </div>
        ))}
    </li>
  );
}
