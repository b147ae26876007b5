/**
 * A group's form, to create one (groups/create) or edit one (groups/update, only the fields
 * changed): Name (`fname`), Note (`fnote`), the keyword whose texters join it (`KeywordId`, from
 * keyword/index; 0 for none) and its parent group (`ParentId`, picked with a server search; 0 for
 * none), with what the API's messages mean next to each field (docs/API.md §10.3).
 */
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { GroupPicker, loadAll, loadGroupName, type Group } from './contact-shared.tsx';

type Keyword = components['schemas']['KeywordReservation'];
type GroupBody = components['schemas']['GroupWriteBody'];

/** What the API's messages on a group's fields mean on this form. */
export const GROUP_HELP: FieldHelp = {
  fname: {
    'Fname cannot be blank.': 'Give the group a name.',
    'Fname should contain at least 3 characters.': 'The name needs at least 3 characters.',
    'Fname should contain at most 255 characters.': 'The name can have at most 255 characters.',
  },
  fnote: {
    'Fnote should contain at least 3 characters.': 'A note needs at least 3 characters, or none.',
    'Fnote should contain at most 255 characters.': 'A note can have at most 255 characters.',
  },
  KeywordId: { 'Keyword Id is invalid.': 'That keyword is no longer reserved: choose another one, or none.' },
  ParentId: {
    'Parent Id is invalid.':
      'Choose another parent group: a group cannot be inside itself or inside one of its own subgroups, and the parent must still exist.',
  },
};

const GROUP_FIELDS = ['fname', 'fnote', 'KeywordId', 'ParentId'] as const;

/** The account's keyword reservations (keyword/index, every page), for the keyword choice and the groups' details. */
export function useKeywords(api: Api): { keywords: Keyword[] | undefined; error: string | undefined } {
  const [keywords, setKeywords] = useState<Keyword[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (!api.can('keywords:read')) return setKeywords([]);
    let live = true;
    loadAll<Keyword>((page) => api.call<Keyword[]>('GET', '/v1/keyword/index', { query: { page: String(page), 'per-page': '100' } }))
      .then(({ rows }) => live && setKeywords(rows))
      .catch((e: unknown) => live && setError(e instanceof Error ? e.message : 'The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [api]);
  return { keywords, error };
}

/** A keyword reservation in words: `JOIN (on 55155)`. */
export function keywordText(k: Keyword): string {
  return `${k.Keyword ?? ''} (on ${k.Number ?? ''})`;
}

/** Creates a group (no `group`) or edits `group`; `onSaved` gets the answer's group. */
export function GroupForm(props: { api: Api; group?: Group; onSaved: (group: Group | undefined) => void; onCancel?: () => void }) {
  const { api, group } = props;
  const editing = group !== undefined;
  const prefix = editing ? `edit-group-${group.Id}` : 'new-group';
  const [name, setName] = useState(group?.Name ?? '');
  const [note, setNote] = useState(group?.Note ?? '');
  const [keywordId, setKeywordId] = useState(group?.KeywordId ?? 0);
  const [parent, setParent] = useState<{ id: number; name: string | undefined }>({ id: group?.ParentId ?? 0, name: undefined });
  const { keywords, error: keywordError } = useKeywords(api);
  const form = useFormErrors(GROUP_FIELDS, GROUP_HELP);
  useEffect(() => {
    let live = true;
    if (parent.id !== 0 && parent.name === undefined)
      void loadGroupName(api, parent.id).then((n) => live && setParent({ id: parent.id, name: n }));
    return () => {
      live = false;
    };
  }, [parent.id]);
  const id = (field: string) => `${prefix}-${field}`;

  return (
    <form
      class="compose card"
      aria-labelledby={id('title')}
      onSubmit={(e) => {
        e.preventDefault();
        let body: Partial<GroupBody>;
        if (!editing) {
          body = { fname: name };
          if (note !== '') body.fnote = note;
          if (keywordId !== 0) body.KeywordId = keywordId;
          if (parent.id !== 0) body.ParentId = parent.id;
        } else {
          body = {};
          if (name !== (group.Name ?? '')) body.fname = name;
          if (note !== (group.Note ?? '')) body.fnote = note;
          if (keywordId !== (group.KeywordId ?? 0)) body.KeywordId = keywordId;
          if (parent.id !== (group.ParentId ?? 0)) body.ParentId = parent.id;
          if (Object.keys(body).length === 0) return props.onSaved(undefined);
        }
        void submitForm(
          () =>
            editing
              ? api.PUT('/v1/groups/update', { params: { query: { id: String(group.Id) } }, body: body as GroupBody })
              : api.POST('/v1/groups/create', { body: body as GroupBody }),
          form,
          (saved) => props.onSaved(saved ?? group),
        );
      }}
    >
      <h2 id={id('title')}>{editing ? 'Edit group' : 'Create a group'}</h2>
      <div class="form-grid">
        <div>
          <label for={id('fname')}>Name</label>
          <input
            id={id('fname')}
            value={name}
            aria-required="true"
            onInput={(e) => setName(e.currentTarget.value)}
            {...form.aria('fname', id('fname'))}
          />
          <FieldMessage form={form} field="fname" id={id('fname')} />
        </div>
        <div>
          <label for={id('fnote')}>Note (optional)</label>
          <input id={id('fnote')} value={note} onInput={(e) => setNote(e.currentTarget.value)} {...form.aria('fnote', id('fnote'))} />
          <FieldMessage form={form} field="fnote" id={id('fnote')} />
        </div>
        <div>
          <label for={id('KeywordId')}>Keyword</label>
          <select
            id={id('KeywordId')}
            value={String(keywordId)}
            onInput={(e) => setKeywordId(Number(e.currentTarget.value))}
            aria-describedby={`${id('KeywordId')}-hint`}
            {...form.aria('KeywordId', id('KeywordId'))}
          >
            <option value="0">None</option>
            {(keywords ?? []).map((k) => (
              <option key={k.Id} value={String(k.Id)}>
                {keywordText(k)}
              </option>
            ))}
            {keywordId !== 0 && keywords !== undefined && !keywords.some((k) => k.Id === keywordId) && (
              <option value={String(keywordId)}>Keyword {keywordId}</option>
            )}
          </select>
          <p class="hint" id={`${id('KeywordId')}-hint`}>
            {keywordError ??
              (keywords === undefined
                ? 'Loading your keywords…'
                : keywords.length === 0
                  ? 'Reserve a keyword on the Keywords page to let people join by texting it.'
                  : 'Whoever texts the keyword joins the group.')}
          </p>
          <FieldMessage form={form} field="KeywordId" id={id('KeywordId')} />
        </div>
      </div>
      <fieldset class="plain group-choice">
        <legend>Parent group</legend>
        <p id={id('parent-now')}>
          {parent.id === 0 ? 'None: a top-level group.' : `Inside ${parent.name ?? `group ${parent.id}`}.`}{' '}
          {parent.id !== 0 && (
            <button
              type="button"
              class="link"
              onClick={() => {
                setParent({ id: 0, name: undefined });
                document.getElementById(`${id('ParentId')}-search`)?.focus();
              }}
            >
              No parent group
            </button>
          )}
        </p>
        <GroupPicker
          api={api}
          id={id('ParentId')}
          label="Parent group"
          value={parent.id === 0 ? '' : String(parent.id)}
          onChange={(value, g) => setParent({ id: Number(value), name: g?.Name })}
        />
        <FieldMessage form={form} field="ParentId" id={id('ParentId')} />
      </fieldset>
      <GeneralError form={form} />
      <div class="actions">
        <button type="submit">{editing ? 'Save' : 'Create group'}</button>
        {props.onCancel !== undefined && (
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
