/**
 * A contact's values of the account's custom fields (docs/API.md §10.4): every field, paged, with
 * this contact's value (custom-contact-fields-entry/index?frcontact=), set (…-entry/create), changed
 * (…-entry/update) or removed (…-entry/delete, asked first).
 */
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { ConfirmButton, useDraft } from './ui.tsx';
import { loadAll, StatusLine } from './contact-shared.tsx';

type CustomField = components['schemas']['CustomField'];
type Entry = components['schemas']['CustomFieldValue'];

/** What the API's messages on a value mean here. */
const VALUE_HELP: FieldHelp = {
  fvalue: {
    'Fvalue cannot be blank.': 'Enter a value. To take the value away, use Remove value.',
    'Fvalue should contain at most 255 characters.': 'A value can have at most 255 characters.',
  },
  frfield: { 'Frfield is invalid.': 'This field no longer exists: reload the page.' },
  frcontact: { 'Frcontact is invalid.': 'This contact no longer exists.' },
};

/** The custom fields section of a contact's page. */
export function ContactValues(props: { api: Api; contactId: number; contactName: string }) {
  const { api } = props;
  const writable = api.can('fields:write');
  const fields = usePagedList<CustomField>(
    (page) =>
      api.GET('/v1/custom-contact-fields/index', {
        params: { query: { page: String(page), 'per-page': '20', fields: 'Id,Name' } },
      }),
    [api],
    { param: 'fieldsPage' },
  );
  const [entries, setEntries] = useState<Map<number, Entry> | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    loadAll<Entry>((page) =>
      api.GET('/v1/custom-contact-fields-entry/index', {
        params: { query: { frcontact: String(props.contactId), page: String(page), 'per-page': '100' } },
      }),
    )
      .then(({ rows }) => {
        if (!live) return;
        setError(undefined);
        setEntries(new Map(rows.map((e) => [e.CustomFieldId ?? 0, e])));
      })
      .catch((e: unknown) => live && setError(e instanceof Error ? e.message : 'The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [api, props.contactId, tick]);

  return (
    <section class="card" aria-labelledby="contact-values-title">
      <h2 id="contact-values-title">Custom fields</h2>
      <p class="hint">
        Messages can use a value as <code>{'{Field:Name}'}</code>. The fields themselves are on the <a href="#/fields">Custom fields</a>{' '}
        page.
      </p>
      <ErrorLine error={fields.error ?? error} />
      {fields.rows === undefined || entries === undefined ? (
        <p role="status">Loading…</p>
      ) : fields.rows.length === 0 ? (
        <p>The account has no custom fields yet.</p>
      ) : (
        <ul class="field-values">
          {fields.rows.map((f) => (
            <FieldValue
              key={f.Id}
              api={api}
              field={f}
              entry={entries.get(f.Id ?? 0)}
              contactId={props.contactId}
              contactName={props.contactName}
              writable={writable}
              onChange={() => setTick((n) => n + 1)}
            />
          ))}
        </ul>
      )}
      <Pager list={fields} noun="custom fields" />
    </section>
  );
}

/** One field's value for the contact: an input with Save, and Remove value when it has one. */
function FieldValue(props: {
  api: Api;
  field: CustomField;
  entry: Entry | undefined;
  contactId: number;
  contactName: string;
  writable: boolean;
  onChange: () => void;
}) {
  const { api, field, entry } = props;
  const name = field.Name ?? '';
  const id = `value-${field.Id}`;
  // A value saved or removed (here or elsewhere) is the input's new value.
  const [value, setValue] = useDraft(entry?.Entry ?? '', `${entry?.Id}\n${entry?.Entry}`);
  const [status, setStatus] = useState<string | undefined>();
  const form = useFormErrors(['fvalue', 'frfield', 'frcontact'], VALUE_HELP);
  const body = { frfield: field.Id ?? 0, frcontact: props.contactId, fvalue: value };
  return (
    <li data-testid="field-value" data-field={field.Id}>
      <form
        class="field-value"
        onSubmit={(e) => {
          e.preventDefault();
          setStatus(undefined);
          void submitForm(
            () =>
              entry === undefined
                ? api.POST('/v1/custom-contact-fields-entry/create', { body })
                : api.PUT('/v1/custom-contact-fields-entry/update', { params: { query: { id: String(entry.Id) } }, body }),
            form,
            () => {
              setStatus('Saved.');
              props.onChange();
            },
          );
        }}
      >
        <label for={id}>{name}</label>
        <input
          id={id}
          value={value}
          readOnly={!props.writable}
          maxLength={255}
          onInput={(e) => {
            setValue(e.currentTarget.value);
            setStatus(undefined);
          }}
          {...form.aria('fvalue', id)}
        />
        <FieldMessage form={form} field="fvalue" id={id} />
        <GeneralError form={form} />
        {props.writable && (
          <div class="actions">
            <button type="submit" aria-label={`Save ${name}`}>
              Save
            </button>
            {entry !== undefined && (
              <ConfirmButton
                label="Remove value"
                ariaLabel={`Remove the value of ${name}`}
                question={`Remove ${props.contactName}'s value of “${name}” (“${entry.Entry ?? ''}”)? Messages using {Field:${name}} then get an empty value for this contact.`}
                confirm="Remove value"
                onConfirm={() =>
                  submitForm(
                    () => api.DELETE('/v1/custom-contact-fields-entry/delete', { params: { query: { id: String(entry.Id) } } }),
                    form,
                    () => {
                      setValue('');
                      setStatus('Value removed.');
                      props.onChange();
                    },
                  ).then(() => document.getElementById(id)?.focus())
                }
              />
            )}
          </div>
        )}
        {status !== undefined && <StatusLine text={status} focus={false} />}
      </form>
    </li>
  );
}
