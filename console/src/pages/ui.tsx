import { useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

/**
 * A destructive action asked twice, in the page (no `window.confirm`): the button shows a question
 * with the confirming button, focused, and Cancel. Nothing is sent until the second click.
 */
export function ConfirmButton(props: {
  /** The first button's text, e.g. "Revoke". */
  label: string;
  /** Its accessible name when the text alone is ambiguous in a list, e.g. "Revoke key ci". */
  ariaLabel?: string;
  /** The question, e.g. "Revoke key ci? Programs using it stop working at once." */
  question: string;
  /** The confirming button's text, e.g. "Revoke key". */
  confirm: string;
  onConfirm: () => unknown;
  disabled?: boolean;
  /** The dismissing button's text, "Cancel" unless the action is itself a cancel (then e.g. "Keep it"). */
  dismiss?: string;
}) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  // Cancel removes the focused button: the focus goes back to the first one, never to <body>.
  const askRef = useRef<HTMLButtonElement>(null);
  const cancelled = useRef(false);
  // A layout effect: the focus moves before the question is painted, so a key pressed at once
  // (Enter, Tab) acts on the confirming button, never on the one that is gone.
  useLayoutEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (cancelled.current) askRef.current?.focus();
    cancelled.current = false;
  }, [asking]);
  if (!asking)
    return (
      <button
        ref={askRef}
        type="button"
        class="secondary"
        aria-label={props.ariaLabel}
        disabled={props.disabled}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  return (
    <div class="confirm" role="group" aria-label="Confirm">
      <p>{props.question}</p>
      <div class="actions">
        <button
          ref={confirmRef}
          type="button"
          class="danger"
          onClick={() => {
            setAsking(false);
            void props.onConfirm();
          }}
        >
          {props.confirm}
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            cancelled.current = true;
            setAsking(false);
          }}
        >
          {props.dismiss ?? 'Cancel'}
        </button>
      </div>
    </div>
  );
}

/** Copies `text` to the clipboard; where the browser refuses, says to select it by hand. */
export function CopyButton(props: { text: string; label?: string }) {
  const [done, setDone] = useState<string | undefined>();
  return (
    <>
      <button
        type="button"
        class="secondary"
        onClick={() => {
          navigator.clipboard
            ?.writeText(props.text)
            .then(() => setDone('Copied.'))
            .catch(() => setDone('The browser did not allow copying: select the text and copy it.'));
          if (!navigator.clipboard) setDone('The browser did not allow copying: select the text and copy it.');
        }}
      >
        {props.label ?? 'Copy'}
      </button>
      <span class="hint" role="status">
        {done ?? ''}
      </span>
    </>
  );
}

/**
 * A secret the server shows once (a key's secret, an invite link, recovery codes): the value, a
 * Copy button, the warning that it will not be shown again, and Done to hide it.
 */
export function ShownOnce(props: { title: string; value: string; warning: string; onDone: () => void; children?: ComponentChildren }) {
  const box = useRef<HTMLElement>(null);
  const id = useId();
  useEffect(() => box.current?.focus(), []);
  return (
    <section class="card once" aria-labelledby={id} tabIndex={-1} ref={box} data-testid="shown-once">
      <h2 id={id}>{props.title}</h2>
      <p class="warning">{props.warning}</p>
      {props.children ?? (
        <p>
          <code class="secret" data-testid="secret">
            {props.value}
          </code>
        </p>
      )}
      <div class="actions">
        <CopyButton text={props.value} />
        <button type="button" onClick={props.onDone}>
          Done
        </button>
      </div>
    </section>
  );
}

/** A datetime-local value (`YYYY-MM-DDTHH:MM` or `…:SS`) as `YYYY-MM-DD HH:MM:SS`, read in the service's time zone; "" stays "". */
export function serviceDateTime(value: string): string {
  if (value === '') return '';
  const [date = '', time = ''] = value.split('T');
  return `${date} ${time.length === 5 ? `${time}:00` : time}`;
}

const RECORD_DATE = /^(\d{4})[:-](\d{2})[:-](\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?/;

/**
 * The console's one date format, `YYYY-MM-DD HH:MM:SS` in the service's time zone (named once, in
 * the header): the API writes most dates that way and the spec's scheduled records as
 * `YYYY:MM:DD HH:MM:SS`; both are shown alike. null or "" gives `empty`.
 */
export function formatDate(value: string | null | undefined, empty = '—'): string {
  if (value === null || value === undefined || value === '') return empty;
  const m = RECORD_DATE.exec(value);
  if (!m) return value;
  return `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}:${m[6] ?? '00'}`;
}

/** A record's date as a `<time>` in the console's one format (formatDate). */
export function When(props: { value: string | null | undefined; empty?: string }) {
  const text = formatDate(props.value, props.empty);
  const m = RECORD_DATE.exec(props.value ?? '');
  return m ? (
    <time class="nowrap" dateTime={`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}`}>
      {text}
    </time>
  ) : (
    <span>{text}</span>
  );
}

/**
 * A record's date as a datetime-local value with its seconds (`YYYY-MM-DDTHH:MM:SS`), so that
 * saving an unchanged form sends back the same time (inputs take `step={1}`); "" when none.
 */
export function toLocalInput(value: string | null | undefined): string {
  const m = RECORD_DATE.exec(value ?? '');
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}` : '';
}

/**
 * After a form closes without a result (Cancel), the control that had the focus is gone: the
 * focus goes back to the page's heading on the next frame, never to `<body>`.
 */
export function focusHeadingSoon(): void {
  requestAnimationFrame(() => {
    const heading = document.querySelector<HTMLElement>('main h1');
    if (heading === null) return;
    heading.tabIndex = -1;
    heading.focus();
  });
}

/**
 * A form's draft of `source` (the filters in the URL, a stored value): it starts as `source`, and
 * goes back to it whenever `key` (a string that changes exactly when `source` does) changes, by
 * Back, a link or a save elsewhere; what is typed in between stays. The draft remembers the key it
 * was typed under, so the reset is part of the render that sees the new key, not an effect: an
 * effect runs after the page is painted, and on the first render would wipe whatever was typed in
 * that first frame.
 */
export function useDraft<T>(source: T, key: string): [T, (next: T) => void] {
  const typed = useRef<{ key: string; draft: T } | undefined>(undefined);
  const [, redraw] = useState(0);
  // A new key forgets what was typed under the old one (Back then Forward shows the URL's value).
  if (typed.current !== undefined && typed.current.key !== key) typed.current = undefined;
  const set = (next: T) => {
    typed.current = { key, draft: next };
    redraw((n) => n + 1);
  };
  return [typed.current === undefined ? source : typed.current.draft, set];
}
