import { useEffect, useRef, useState } from 'preact/hooks';
import type { MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { placeHref, setPlace, usePlace } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { FieldMessage, GeneralError, submitForm, useFormErrors, type FieldHelp } from './fields.tsx';
import { ConfirmButton, When } from './ui.tsx';
import { Notice, useEveryPage, useNotice } from './template-kit.tsx';
import { TemplateForm, templateMediaText, type Media, type Template } from './template-editor.tsx';

/** What the API's messages on an upload mean here (docs/API.md §10.7). */
const UPLOAD_HELP: FieldHelp = {
  file: {
    'Only files with these extensions are allowed: jpg, gif, bmp, png, tiff.':
      'This file is not a JPEG, GIF, BMP, PNG or TIFF image: its content decides, not its name. Convert it, then upload it again.',
    'Animated GIF files are not supported.': 'Upload a still image: an MMS takes no animated GIF.',
  },
};

/** A template's media ids, each once. */
const idsOf = (t: Template): number[] => [...new Set(t.MediaIds ?? [])];

/** The question of Delete on an image: the templates that use it, and those it would leave with no media. */
function mediaQuestion(m: Media, templates: { rows: Template[]; complete: boolean } | undefined): string {
  const name = m.FileName ?? `image ${m.Id}`;
  if (templates === undefined) return `Delete ${name}? It is also removed from every template that uses it. This cannot be undone.`;
  const users = templates.rows.filter((t) => idsOf(t).includes(m.Id ?? 0));
  const emptied = users.filter((t) => idsOf(t).length === 1);
  const more = templates.complete ? '' : ' (Only the first 5,000 templates were read.)';
  if (users.length === 0) return `Delete ${name}? No template uses it.${more} This cannot be undone.`;
  const quoted = (list: Template[]) => list.map((t) => t.Name ?? '').join(', ');
  return (
    `Delete ${name}? It is removed from the templates that use it: ${quoted(users)}.` +
    (emptied.length === 0
      ? ' Each keeps at least one other image.'
      : ` These would be left with no media: ${quoted(emptied)}; such a template cannot be sent (“Mms Template Id is invalid.”) until an image is added to it.`) +
    `${more} This cannot be undone.`
  );
}

/**
 * Media and MMS templates (docs/API.md §10.7). The media (media/index, paged in the URL's
 * `mediaPage`) with a preview, the templates that use each, an upload (media/upload) and Delete
 * (media/delete, asked first, naming the templates it would leave with no media). The templates
 * (mms-templates/index, paged in `templatesPage`), each with its images (or "no media: cannot be
 * sent"), created and edited (mms-templates/create, update; the edited one is the URL's `template`)
 * with a media picker, and deleted (asked first). Changes need `media:write`.
 */
export function MediaAndTemplates(props: { api: Api }) {
  const { api } = props;
  const place = usePlace();
  const writable = api.can('media:write');
  const editing = place.params.get('template') ?? '';
  // Bumped after every change: every list of the page is read again (media counts stay true).
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  const { notice, say } = useNotice();
  const media = usePagedList<Media>(
    (page) => api.GET('/v1/media/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [api, version],
    { param: 'mediaPage' },
  );
  const templates = usePagedList<Template>(
    (page) => api.GET('/v1/mms-templates/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [api, version],
    { param: 'templatesPage' },
  );
  const allTemplates = useEveryPage<Template>(
    (page) => api.GET('/v1/mms-templates/index', { params: { query: { page: String(page), 'per-page': '100' } } }),
    [api, version],
  );
  const allMedia = useEveryPage<Media>(
    (page) => api.GET('/v1/media/index', { params: { query: { page: String(page), 'per-page': '100' } } }),
    [api, version],
  );
  const names = new Map<number, string>();
  for (const m of [...(allMedia?.rows ?? []), ...(media.rows ?? [])])
    if (m.Id !== undefined) names.set(m.Id, m.FileName ?? `image ${m.Id}`);

  async function removeMedia(m: Media) {
    const name = m.FileName ?? `image ${m.Id}`;
    const emptied = (allTemplates?.rows ?? []).filter((t) => idsOf(t).length === 1 && idsOf(t)[0] === m.Id);
    try {
      const { error, response } = await api.DELETE('/v1/media/delete', { params: { query: { id: String(m.Id) } } });
      if (error !== undefined || !response.ok) return say(errorText(error, response.status));
      say(
        `Deleted ${name}.` +
          (emptied.length === 0
            ? ''
            : ` ${emptied.map((t) => t.Name ?? '').join(', ')} now ${emptied.length === 1 ? 'has' : 'have'} no media and cannot be sent until an image is added.`),
      );
      changed();
    } catch {
      say('The server could not be reached.');
    }
  }

  async function removeTemplate(t: Template) {
    try {
      const { error, response } = await api.DELETE('/v1/mms-templates/delete', { params: { query: { id: String(t.Id) } } });
      if (error !== undefined || !response.ok) return say(errorText(error, response.status));
      say(`Deleted the template “${t.Name ?? ''}”.`);
      if (editing === String(t.Id)) setPlace({ template: undefined });
      changed();
    } catch {
      say('The server could not be reached.');
    }
  }

  const editHref = (id: number | undefined) => {
    const params = new URLSearchParams(place.params);
    params.set('template', String(id));
    return placeHref('media', undefined, params);
  };

  return (
    <>
      <h1>Media and templates</h1>
      <Notice notice={notice} />
      {writable && (
        <Upload
          api={api}
          onDone={(name) => {
            say(`Uploaded ${name}.`);
            changed();
          }}
        />
      )}
      <h2>Media</h2>
      <ErrorLine error={media.error} />
      {media.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : media.rows.length === 0 ? (
        <p>No media.</p>
      ) : (
        <ul class="cards-list">
          {media.rows.map((m) => {
            const users = allTemplates?.rows.filter((t) => idsOf(t).includes(m.Id ?? 0));
            return (
              <li key={m.Id} class="card" data-testid="media" data-id={m.Id}>
                <Preview api={api} media={m} />
                <p>
                  <strong class="text">{m.FileName}</strong> · {m.MimeType} · {m.Width}×{m.Height} px · {m.Size} bytes
                </p>
                <p class="hint">
                  Uploaded <When value={m.DateCreated} />
                </p>
                {users !== undefined && (
                  <p data-testid="media-use">
                    {users.length === 0 ? 'Used by no template.' : `Used by: ${users.map((t) => t.Name ?? '').join(', ')}.`}
                  </p>
                )}
                {writable && (
                  <ConfirmButton
                    label="Delete"
                    ariaLabel={`Delete ${m.FileName ?? ''}`}
                    question={mediaQuestion(m, allTemplates)}
                    confirm="Delete image"
                    onConfirm={() => removeMedia(m)}
                  />
                )}
              </li>
            );
          })}
        </ul>
      )}
      <Pager list={media} noun="media" />
      {writable && editing !== '' && (
        <EditTemplate
          api={api}
          id={editing}
          names={names}
          version={version}
          onDone={(text) => {
            if (text !== undefined) say(text);
            setPlace({ template: undefined });
            changed();
          }}
        />
      )}
      {writable && (
        <TemplateForm
          api={api}
          prefix="template"
          label="Create a template"
          title="Create a template"
          names={names}
          version={version}
          onSaved={(t) => {
            say(`Created the template “${t.Name ?? ''}”.`);
            changed();
          }}
        />
      )}
      <h2>Templates</h2>
      <ErrorLine error={templates.error} />
      {templates.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : templates.rows.length === 0 ? (
        <p>No templates.</p>
      ) : (
        <ul class="cards-list">
          {templates.rows.map((tpl) => {
            const ids = idsOf(tpl);
            return (
              <li key={tpl.Id} class="card" data-testid="template" data-id={tpl.Id}>
                <p>
                  <strong class="text">{tpl.Name}</strong>
                </p>
                <p data-testid="template-media" class={ids.length === 0 ? 'warning' : undefined}>
                  {templateMediaText(ids, names)}
                </p>
                {(tpl.Subject ?? '') !== '' && <p class="text">Subject: {tpl.Subject}</p>}
                {(tpl.Message ?? '') !== '' && <p class="text">{tpl.Message}</p>}
                <p class="hint">
                  Created <When value={tpl.DateCreated} /> · changed <When value={tpl.DateUpdated} />
                </p>
                {writable && (
                  <div class="actions">
                    <a href={editHref(tpl.Id)} aria-label={`Edit ${tpl.Name ?? ''}`}>
                      Edit
                    </a>
                    <ConfirmButton
                      label="Delete"
                      ariaLabel={`Delete template ${tpl.Name ?? ''}`}
                      question={`Delete the template “${tpl.Name ?? ''}”? It can no longer be chosen for an MMS; its images stay in the media. This cannot be undone.`}
                      confirm="Delete template"
                      onConfirm={() => removeTemplate(tpl)}
                    />
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <Pager list={templates} noun="templates" />
    </>
  );
}

/** Uploads an image (media/upload), its errors by the file field. */
function Upload(props: { api: Api; onDone: (name: string) => void }) {
  const [file, setFile] = useState<File | undefined>();
  const [busy, setBusy] = useState(false);
  // A new key empties the file input after an upload.
  const [round, setRound] = useState(0);
  const form = useFormErrors(['file'], UPLOAD_HELP);

  async function upload(event: Event) {
    event.preventDefault();
    if (file === undefined) return form.setGeneral('Choose an image.');
    const body = new FormData();
    body.append('file', file, file.name);
    setBusy(true);
    await submitForm(
      // The schema types the part as a string; the body sent is the FormData (the browser writes the multipart boundary).
      () => props.api.POST('/v1/media/upload', { body: { file: file.name }, bodySerializer: () => body }),
      form,
      () => {
        props.onDone(file.name);
        setFile(undefined);
        setRound((n) => n + 1);
      },
    );
    setBusy(false);
  }

  return (
    <form class="compose card" aria-label="Upload an image" onSubmit={(e) => void upload(e)}>
      <h2>Upload an image</h2>
      <label for="media-file">Image (JPEG, GIF, BMP, PNG or TIFF)</label>
      <input
        key={round}
        id="media-file"
        type="file"
        accept="image/*"
        onInput={(e) => setFile(e.currentTarget.files?.[0])}
        {...form.aria('file', 'media-file')}
      />
      <FieldMessage form={form} field="file" id="media-file" />
      <GeneralError form={form} />
      <button type="submit" disabled={busy}>
        {busy ? 'Uploading…' : 'Upload'}
      </button>
      {busy && <progress aria-label="Uploading" />}
    </form>
  );
}

/** The template of the URL's `template`, read (mms-templates/view) and edited; its heading takes the focus. */
function EditTemplate(props: {
  api: Api;
  id: string;
  names: ReadonlyMap<number, string>;
  version: number;
  onDone: (text: string | undefined) => void;
}) {
  const [template, setTemplate] = useState<Template | undefined>();
  const [error, setError] = useState<string | undefined>();
  const box = useRef<HTMLElement>(null);
  useEffect(() => {
    let live = true;
    setTemplate(undefined);
    props.api
      .GET('/v1/mms-templates/view', { params: { query: { id: props.id } } })
      .then(({ data, error, response }) => {
        if (!live) return;
        if (response.status === 404) return setError(`There is no template ${props.id}: it was deleted, or belongs to another account.`);
        if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
        setError(undefined);
        setTemplate(data);
      })
      .catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [props.api, props.id]);
  useEffect(() => {
    if (template !== undefined || error !== undefined) box.current?.focus();
  }, [template, error]);
  return (
    <section ref={box} tabIndex={-1} aria-label={`Edit template ${template?.Name ?? props.id}`} class="edit-template">
      {error !== undefined ? (
        <>
          <ErrorLine error={error} />
          <button type="button" class="secondary" onClick={() => props.onDone(undefined)}>
            Close
          </button>
        </>
      ) : template === undefined ? (
        <p role="status">Loading…</p>
      ) : (
        <TemplateForm
          key={template.Id}
          api={props.api}
          prefix="edit-template"
          label={`Edit template ${template.Name ?? ''}`}
          title={`Edit template “${template.Name ?? ''}”`}
          template={template}
          names={props.names}
          version={props.version}
          onSaved={(t) => props.onDone(`Saved the template “${t.Name ?? ''}”.`)}
          onCancel={() => props.onDone(`The template “${template.Name ?? ''}” was not changed.`)}
        />
      )}
    </section>
  );
}

/** The image itself, fetched through the API (media/download) into a blob: URL, so the token is in no element. */
function Preview(props: { api: MsgsvcClient; media: Media }) {
  const [src, setSrc] = useState<string | undefined>();
  useEffect(() => {
    let url: string | undefined;
    let live = true;
    props.api
      .GET('/v1/media/download', { params: { query: { id: String(props.media.Id) } }, headers: { Accept: '*/*' }, parseAs: 'blob' })
      .then(({ data }) => {
        if (!live || !(data instanceof Blob)) return;
        url = URL.createObjectURL(data);
        setSrc(url);
      })
      .catch(() => undefined);
    return () => {
      live = false;
      if (url !== undefined) URL.revokeObjectURL(url);
    };
  }, [props.api, props.media.Id]);
  return src === undefined ? null : <img class="preview" src={src} alt={`Preview of ${props.media.FileName ?? 'the image'}`} />;
}
