/**
 * A message's text box, shared by Compose, Scheduled and a conversation's reply: the textarea, the
 * live counter (encoding, segments, credits by the server's own rule, ../cost.ts) and, at once
 * past 1,600 characters, the warning that the API will refuse it (docs/API.md §10.6), next to the
 * field; the form disables its Send while `tooLong` holds.
 */
import { characterCount, MESSAGE_MAX_CHARACTERS, textCost } from '../cost.ts';
import { FieldMessage, type FormErrors } from './fields.tsx';

/** True when `text` is over the API's 1,600 characters. */
export function tooLong(text: string): boolean {
  return characterCount(text) > MESSAGE_MAX_CHARACTERS;
}

/** The counter under a text: characters in its encoding, segments and credits, by ../cost.ts (the server's own rule). */
export function CostLine(props: { text: string; id?: string }) {
  const cost = textCost(props.text);
  return (
    <p class="hint" id={props.id ?? 'counter'} data-testid="counter" aria-live="polite">
      {cost.units} {cost.encoding === 'GSM-7' ? 'GSM-7 characters' : 'UCS-2 characters'} · {cost.segments}{' '}
      {cost.segments === 1 ? 'segment' : 'segments'} · {cost.credits} {cost.credits === 1 ? 'credit' : 'credits'}
      {cost.personalised && " · before merge fields: each recipient's values add to it"}
    </p>
  );
}

/** The warning past 1,600 characters (nothing at or under it). */
export function LengthWarning(props: { text: string; id: string }) {
  const n = characterCount(props.text);
  if (n <= MESSAGE_MAX_CHARACTERS) return null;
  const over = n - MESSAGE_MAX_CHARACTERS;
  return (
    <p class="field-error" id={props.id} role="alert" data-testid="too-long">
      {n.toLocaleString('en')} characters: the API takes at most {MESSAGE_MAX_CHARACTERS.toLocaleString('en')}. Remove{' '}
      {over.toLocaleString('en')} {over === 1 ? 'character' : 'characters'} to send it.
    </p>
  );
}

/**
 * The labelled textarea of a message with its counter (`counter`: an SMS) and the length warning;
 * `form` shows the API's error on `Message` under it.
 */
export function MessageField(props: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  rows?: number;
  counter?: boolean;
  /** The counter's id (`counter` by default: one counter a page). */
  counterId?: string;
  form?: FormErrors;
}) {
  const counterId = props.counterId ?? 'counter';
  const limitId = `${props.id}-limit`;
  const over = tooLong(props.value);
  const apiError = props.form?.of('Message') !== undefined;
  const describedBy = [props.counter !== false ? counterId : '', over ? limitId : '', apiError ? `${props.id}-error` : '']
    .filter((s) => s !== '')
    .join(' ');
  return (
    <>
      <label for={props.id}>{props.label}</label>
      <textarea
        id={props.id}
        name={props.id}
        rows={props.rows ?? 5}
        value={props.value}
        aria-invalid={over || apiError ? 'true' : undefined}
        aria-describedby={describedBy === '' ? undefined : describedBy}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      {props.counter !== false && <CostLine text={props.value} id={counterId} />}
      <LengthWarning text={props.value} id={limitId} />
      {props.form !== undefined && <FieldMessage form={props.form} field="Message" id={props.id} />}
    </>
  );
}
