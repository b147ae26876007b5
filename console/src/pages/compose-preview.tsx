/**
 * What one recipient will get, from the server (`POST /v1/sms/preview`, docs/API.md §14.3.2):
 * the text with its merge fields filled in for that recipient, its encoding, segments and credits
 * (for an MMS, the MMS price); nothing is sent or debited. Asked a moment after typing stops, once
 * the form names a recipient and something to send. An MMS also shows its template: subject,
 * media (thumbnails through `media/download`, which the session's cookie authenticates) and text.
 */
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';

type Preview = components['schemas']['SmsPreview'];
type Template = components['schemas']['MmsTemplate'];

/** How long typing must pause before the preview is asked for (ms); each preview is one audited POST. */
const PREVIEW_DEBOUNCE_MS = 700;

/** The body of sms/send to preview, or undefined when the form is not ready for one. */
export type PreviewBody = Record<string, string | number>;

/** The state of a preview: the answer, or why there is none. */
export interface PreviewState {
  preview: Preview | undefined;
  /** The API's refusal of this body (the same words send would answer), or "could not be reached". */
  error: string | undefined;
  loading: boolean;
}

/** Asks sms/preview for `body` (again whenever it changes, after a pause); nothing while it is undefined. */
export function usePreview(api: Api, body: PreviewBody | undefined): PreviewState {
  const key = body === undefined ? '' : JSON.stringify(body);
  const [state, setState] = useState<PreviewState>({ preview: undefined, error: undefined, loading: false });
  useEffect(() => {
    if (body === undefined) {
      setState({ preview: undefined, error: undefined, loading: false });
      return;
    }
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    const timer = setTimeout(() => {
      api
        .call<Preview>('POST', '/v1/sms/preview', { body })
        .then(({ data, error, response }) => {
          if (!live) return;
          if (error !== undefined || data === undefined)
            setState({ preview: undefined, error: errorText(error, response.status), loading: false });
          else setState({ preview: data, error: undefined, loading: false });
        })
        .catch(() => live && setState({ preview: undefined, error: 'The server could not be reached.', loading: false }));
    }, PREVIEW_DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [api, key]);
  return state;
}

/** `n credit(s)`. */
export function credits(n: number | undefined): string {
  return `${(n ?? 0).toLocaleString('en')} ${n === 1 ? 'credit' : 'credits'}`;
}

/**
 * The preview box: for whom (`who`), the text as they will get it, and its cost; `hint` says what
 * is missing before there can be one.
 */
export function PreviewBox(props: { state: PreviewState; who: string | undefined; mms: boolean; hint: string; id: string }) {
  const { preview, error, loading } = props.state;
  return (
    <section class="card preview-box" aria-labelledby={`${props.id}-title`} data-testid="preview">
      <h2 id={`${props.id}-title`}>{props.who === undefined ? 'Preview' : `Preview for ${props.who}`}</h2>
      {props.who === undefined ? (
        <p class="hint">{props.hint}</p>
      ) : error !== undefined ? (
        <p class="hint" data-testid="preview-error">
          The API would refuse it: {error}
        </p>
      ) : preview === undefined ? (
        <p class="hint">{loading ? 'Asking the server…' : props.hint}</p>
      ) : (
        <>
          {!props.mms && (
            <p class="text preview-text" data-testid="preview-text">
              {preview.Message}
            </p>
          )}
          <p data-testid="preview-cost" aria-live="polite">
            {props.mms
              ? `MMS · ${credits(preview.Credits)} (the MMS price)`
              : `${preview.Encoding} · ${preview.Segments} ${preview.Segments === 1 ? 'segment' : 'segments'} · ${credits(preview.Credits)}`}
            {loading ? ' · updating…' : ''}
          </p>
        </>
      )}
    </section>
  );
}

/**
 * An MMS template as the recipient's phone shows it: its subject, its media as thumbnails and its
 * text (`text`: the preview's, merged for the recipient, when there is one).
 */
export function TemplateInfo(props: { template: Template; text: string | undefined }) {
  const t = props.template;
  return (
    <div class="template-info" data-testid="mms-template">
      <p>
        <strong>Subject:</strong>{' '}
        <span data-testid="mms-subject">{t.Subject === '' || t.Subject === undefined ? '(none)' : t.Subject}</span>
      </p>
      <ul class="thumbs" aria-label={`Media of template ${t.Name ?? ''}`}>
        {(t.MediaIds ?? []).map((id, i) => (
          <li key={id}>
            <img
              class="thumb"
              data-testid="mms-media"
              src={`/v1/media/download?id=${encodeURIComponent(String(id))}`}
              alt={`Picture ${i + 1} of ${(t.MediaIds ?? []).length} (medium ${id})`}
              loading="lazy"
            />
          </li>
        ))}
      </ul>
      <p class="text" data-testid="mms-text">
        <strong>Text:</strong> {props.text ?? t.Message ?? ''}
      </p>
    </div>
  );
}
