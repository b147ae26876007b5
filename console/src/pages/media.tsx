import { useEffect, useState } from 'preact/hooks';
import type { components, MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import { ErrorLine, Pager, submit, usePagedList } from './list.tsx';

type Media = components['schemas']['Media'];
type Template = components['schemas']['MmsTemplate'];

/**
 * Media and MMS templates (docs/API.md §10.7): the media (media/index, paged) with a preview, an
 * upload (media/upload) and delete (media/delete); the templates (mms-templates/index, paged) with
 * a form that names up to 10 media (mms-templates/create) and delete (mms-templates/delete).
 * Changes need `media:write`.
 */
export function MediaAndTemplates(props: { api: Api }) {
  const writable = props.api.can('media:write');
  const media = usePagedList<Media>(
    (page) => props.api.GET('/v1/media/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [props.api],
  );
  const templates = usePagedList<Template>(
    (page) => props.api.GET('/v1/mms-templates/index', { params: { query: { page: String(page), 'per-page': '20' } } }),
    [props.api],
  );
  const [error, setError] = useState<string | undefined>();
  const [file, setFile] = useState<File | undefined>();
  const [busy, setBusy] = useState(false);

  async function upload(event: Event) {
    event.preventDefault();
    if (file === undefined) return setError('Choose an image.');
    const form = new FormData();
    form.append('file', file, file.name);
    setBusy(true);
    await submit(
      // The schema types the part as a string; the body sent is the FormData (the browser writes the multipart boundary).
      () => props.api.POST('/v1/media/upload', { body: { file: file.name }, bodySerializer: () => form }),
      setError,
      media.reload,
    );
    setBusy(false);
  }

  return (
    <>
      <h1>Media and templates</h1>
      {writable && (
        <form class="compose card" aria-label="Upload an image" onSubmit={(e) => void upload(e)}>
          <h2>Upload an image</h2>
          <label for="media-file">Image (JPEG, GIF, BMP, PNG or TIFF)</label>
          <input id="media-file" type="file" accept="image/*" onInput={(e) => setFile(e.currentTarget.files?.[0])} />
          <button type="submit" disabled={busy}>
            {busy ? 'Uploading…' : 'Upload'}
          </button>
          {busy && <progress aria-label="Uploading" />}
        </form>
      )}
      <ErrorLine error={error ?? media.error} />
      <h2>Media</h2>
      {media.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : media.rows.length === 0 ? (
        <p>No media.</p>
      ) : (
        <ul class="cards-list">
          {media.rows.map((m) => (
            <li key={m.Id} class="card" data-testid="media">
              <Preview api={props.api} media={m} />
              <p>
                <strong class="text">{m.FileName}</strong> · {m.MimeType} · {m.Width}×{m.Height} px · {m.Size} bytes
              </p>
              {writable && (
                <button
                  type="button"
                  class="secondary"
                  aria-label={`Delete ${m.FileName ?? ''}`}
                  onClick={() =>
                    void submit(
                      () => props.api.DELETE('/v1/media/delete', { params: { query: { id: String(m.Id) } } }),
                      setError,
                      media.reload,
                    )
                  }
                >
                  Delete
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <Pager list={media} noun="media" />
      {writable && <CreateTemplate api={props.api} media={media.rows ?? []} onDone={templates.reload} />}
      <h2>Templates</h2>
      <ErrorLine error={templates.error} />
      {templates.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : templates.rows.length === 0 ? (
        <p>No templates.</p>
      ) : (
        <ul class="cards-list">
          {templates.rows.map((tpl) => (
            <li key={tpl.Id} class="card" data-testid="template">
              <p>
                <strong class="text">{tpl.Name}</strong> · media {(tpl.MediaIds ?? []).join(', ')}
              </p>
              {(tpl.Subject ?? '') !== '' && <p class="text">{tpl.Subject}</p>}
              {(tpl.Message ?? '') !== '' && <p class="text">{tpl.Message}</p>}
              {writable && (
                <button
                  type="button"
                  class="secondary"
                  onClick={() =>
                    void submit(
                      () => props.api.DELETE('/v1/mms-templates/delete', { params: { query: { id: String(tpl.Id) } } }),
                      setError,
                      templates.reload,
                    )
                  }
                >
                  Delete template
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <Pager list={templates} noun="templates" />
    </>
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

/** A new MMS template: name, subject, text and its media (1 to 10 of those listed). */
function CreateTemplate(props: { api: MsgsvcClient; media: Media[]; onDone: () => void }) {
  const [name, setName] = useState('');
  const [subject, setSubject] = useState('');
  const [text, setText] = useState('');
  const [ids, setIds] = useState<number[]>([]);
  const [error, setError] = useState<string | undefined>();
  return (
    <form
      class="compose card"
      aria-label="Create a template"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(
          () => props.api.POST('/v1/mms-templates/create', { body: { Name: name, Subject: subject, Message: text, MediaIds: ids } }),
          setError,
          () => {
            setName('');
            setSubject('');
            setText('');
            setIds([]);
            props.onDone();
          },
        );
      }}
    >
      <h2>Create a template</h2>
      <label for="template-name">Template name</label>
      <input id="template-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="template-subject">Subject</label>
      <input id="template-subject" value={subject} onInput={(e) => setSubject(e.currentTarget.value)} />
      <label for="template-text">Text</label>
      <textarea id="template-text" rows={2} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <fieldset class="events">
        <legend>Media (from this page of media)</legend>
        {props.media.map((m) => (
          <label key={m.Id} class="check">
            <input
              type="checkbox"
              checked={ids.includes(m.Id ?? 0)}
              onInput={(e) => setIds(e.currentTarget.checked ? [...ids, m.Id ?? 0] : ids.filter((id) => id !== m.Id))}
            />
            {m.FileName}
          </label>
        ))}
      </fieldset>
      <ErrorLine error={error} />
      <button type="submit">Create template</button>
    </form>
  );
}
