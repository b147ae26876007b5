/**
 * The MMS template form (mms-templates/create and mms-templates/update, docs/API.md §10.7) and its
 * media picker: Name, Subject, Text and 1 to 10 images chosen from the account's media, page after
 * page, with the API's messages shown by their field and what they mean here.
 */
import { useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';

export type Media = components['schemas']['Media'];
export type Template = components['schemas']['MmsTemplate'];

/** What the API's messages on a template's fields mean here. */
const TEMPLATE_HELP: FieldHelp = {
  Name: {
    'Name cannot be blank.': 'Name the template: the name is how Compose offers it.',
    'Name should contain at least 3 characters.': 'A template name has 3 to 64 characters.',
    'Name should contain at most 64 characters.': 'A template name has 3 to 64 characters.',
  },
  Subject: { 'Subject should contain at most 255 characters.': 'Shorten the subject to 255 characters at most.' },
  Message: { 'Message should contain at most 1,600 characters.': 'Shorten the text to 1,600 characters at most.' },
  MediaIds: {
    'Media Ids cannot be blank.': 'Choose at least one image below: an MMS template sends 1 to 10 images.',
    'Media Ids is invalid.': 'Choose 1 to 10 images of this account (one of those chosen may have been deleted meanwhile).',
  },
};

const FIELDS = ['Name', 'Subject', 'Message', 'MediaIds'];

/** "2 images: a.png, b.png", or that the template has none and cannot be sent. */
export function templateMediaText(ids: readonly number[], names: ReadonlyMap<number, string>): string {
  if (ids.length === 0) return 'no media: cannot be sent';
  return `${ids.length} ${ids.length === 1 ? 'image' : 'images'}: ${ids.map((id) => names.get(id) ?? `image ${id}`).join(', ')}`;
}

/**
 * The images of a template: the chosen ones (each with Remove), and the account's media a page at a
 * time (media/index, 10 a page, its own page number) as checkboxes.
 */
function MediaPicker(props: {
  api: Api;
  id: string;
  value: number[];
  onChange: (ids: number[]) => void;
  names: ReadonlyMap<number, string>;
  version: number;
  invalid: boolean;
}) {
  const list = usePagedList<Media>(
    (page) => props.api.GET('/v1/media/index', { params: { query: { page: String(page), 'per-page': '10' } } }),
    [props.api, props.version],
    { param: null },
  );
  const toggle = (id: number, on: boolean) => props.onChange(on ? [...props.value, id] : props.value.filter((v) => v !== id));
  return (
    <fieldset class="events media-picker" aria-describedby={props.invalid ? `${props.id}-chosen ${props.id}-error` : `${props.id}-chosen`}>
      <legend>Images (1 to 10)</legend>
      <p id={`${props.id}-chosen`} class="picker-chosen">
        {props.value.length === 0 ? 'None chosen yet.' : `Chosen: ${templateMediaText(props.value, props.names)}.`}
      </p>
      {props.value.length > 0 && (
        <div class="actions">
          {props.value.map((id) => (
            <button key={id} type="button" class="secondary" onClick={() => toggle(id, false)}>
              Remove {props.names.get(id) ?? `image ${id}`}
            </button>
          ))}
        </div>
      )}
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>No images: upload one above first.</p>
      ) : (
        list.rows.map((m) => (
          <label key={m.Id} class="check">
            <input type="checkbox" checked={props.value.includes(m.Id ?? 0)} onInput={(e) => toggle(m.Id ?? 0, e.currentTarget.checked)} />
            {m.FileName}
          </label>
        ))
      )}
      <Pager list={list} noun="images" />
    </fieldset>
  );
}

/**
 * A template's form: a new one (`template` undefined: mms-templates/create, cleared after) or an
 * edit (mms-templates/update with every field). `prefix` makes its ids unique on the page.
 */
export function TemplateForm(props: {
  api: Api;
  prefix: string;
  label: string;
  title: string;
  template?: Template;
  names: ReadonlyMap<number, string>;
  version: number;
  onSaved: (template: Template) => void;
  onCancel?: () => void;
}) {
  const { prefix, template } = props;
  const [name, setName] = useState(template?.Name ?? '');
  const [subject, setSubject] = useState(template?.Subject ?? '');
  const [text, setText] = useState(template?.Message ?? '');
  const [ids, setIds] = useState<number[]>(template?.MediaIds ?? []);
  const form = useFormErrors(FIELDS, TEMPLATE_HELP);
  const body = { Name: name, Subject: subject, Message: text, MediaIds: ids };
  return (
    <form
      class="compose card"
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        void submitForm(
          () =>
            template === undefined
              ? props.api.POST('/v1/mms-templates/create', { body })
              : props.api.PUT('/v1/mms-templates/update', { params: { query: { id: String(template.Id) } }, body }),
          form,
          (data) => {
            if (data === undefined) return;
            if (template === undefined) {
              setName('');
              setSubject('');
              setText('');
              setIds([]);
            }
            props.onSaved(data);
          },
        );
      }}
    >
      <h2>{props.title}</h2>
      <label for={`${prefix}-name`}>Template name</label>
      <input id={`${prefix}-name`} value={name} onInput={(e) => setName(e.currentTarget.value)} {...form.aria('Name', `${prefix}-name`)} />
      <FieldMessage form={form} field="Name" id={`${prefix}-name`} />
      <label for={`${prefix}-subject`}>Subject</label>
      <input
        id={`${prefix}-subject`}
        value={subject}
        onInput={(e) => setSubject(e.currentTarget.value)}
        {...form.aria('Subject', `${prefix}-subject`)}
      />
      <FieldMessage form={form} field="Subject" id={`${prefix}-subject`} />
      <label for={`${prefix}-text`}>Text</label>
      <textarea
        id={`${prefix}-text`}
        rows={2}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        {...form.aria('Message', `${prefix}-text`)}
      />
      <FieldMessage form={form} field="Message" id={`${prefix}-text`} />
      <MediaPicker
        api={props.api}
        id={`${prefix}-media`}
        value={ids}
        onChange={setIds}
        names={props.names}
        version={props.version}
        invalid={form.of('MediaIds') !== undefined}
      />
      <FieldMessage form={form} field="MediaIds" id={`${prefix}-media`} />
      <GeneralError form={form} />
      <div class="actions">
        <button type="submit">{template === undefined ? 'Create template' : 'Save changes'}</button>
        {props.onCancel && (
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
