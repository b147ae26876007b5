import { useState } from 'preact/hooks';
import { errorFields, errorText } from '../api.ts';

/**
 * What an API message means on one form, next to the field it names: the API's words stay exact
 * (a client developer searches for them), and the console adds, in the form's own terms, what to
 * do. E.g. on the group form, `fname` is the field labelled Name, and "Fname cannot be blank."
 * means "Give the group a name." Keys: the API's field name, then the message exactly as sent.
 */
export type FieldHelp = Record<string, Record<string, string>>;

/** One field's error as the form shows it. */
export interface FieldProblem {
  /** The API's message, exact. */
  message: string;
  /** What it means on this form, when the form knows (FieldHelp). */
  meaning: string | undefined;
}

/** A form's errors: the 422's messages by field, and one line for anything else. */
export interface FormErrors {
  /** An answer that is not a 422 on a known field (a 404, a 409, "could not be reached"). */
  general: string | undefined;
  /** The problem of `field` (the API's field name), if the last answer named it. */
  of(field: string): FieldProblem | undefined;
  /** The input's aria attributes for `field`: invalid, and described by its message. */
  aria(field: string, id: string): { 'aria-invalid'?: 'true'; 'aria-describedby'?: string };
  /** Takes an error answer: a 422 goes to its fields (those `fields` lists; the rest to general). */
  set(error: unknown, status: number): void;
  setGeneral(text: string | undefined): void;
  clear(): void;
}

/**
 * The errors of a form whose inputs are the API fields `fields`, with `help` to explain them. A
 * 422 message on a field the form does not show goes to the general line, so nothing is hidden.
 */
export function useFormErrors(fields: readonly string[], help: FieldHelp = {}): FormErrors {
  const [byField, setByField] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<string | undefined>();
  const of = (field: string): FieldProblem | undefined => {
    const message = byField[field];
    return message === undefined ? undefined : { message, meaning: help[field]?.[message] };
  };
  return {
    general,
    of,
    aria: (field, id) => (byField[field] === undefined ? {} : { 'aria-invalid': 'true', 'aria-describedby': `${id}-error` }),
    set: (error, status) => {
      const listed = status === 422 ? errorFields(error) : [];
      const mine: Record<string, string> = {};
      const rest: string[] = [];
      for (const e of listed) {
        if (fields.includes(e.field) && mine[e.field] === undefined) mine[e.field] = e.message;
        else rest.push(e.message);
      }
      setByField(mine);
      setGeneral(listed.length === 0 ? errorText(error, status) : rest.length > 0 ? rest.join(' ') : undefined);
    },
    setGeneral: (text) => {
      setByField({});
      setGeneral(text);
    },
    clear: () => {
      setByField({});
      setGeneral(undefined);
    },
  };
}

/** The message of `field` under its input (id `${id}-error`, which FormErrors.aria points to). */
export function FieldMessage(props: { form: FormErrors; field: string; id: string }) {
  const problem = props.form.of(props.field);
  if (problem === undefined) return null;
  return (
    <p class="field-error" id={`${props.id}-error`} data-field={props.field}>
      {problem.meaning !== undefined && <span class="meaning">{problem.meaning} </span>}
      <span class="api-message">{problem.meaning !== undefined ? `(The API said: ${problem.message})` : problem.message}</span>
    </p>
  );
}

/** The form's general error line, announced. */
export function GeneralError(props: { form: FormErrors }) {
  return props.form.general === undefined ? null : (
    <p class="error" role="alert">
      {props.form.general}
    </p>
  );
}

/** Runs a form's API call: its errors to `form` (by field), `done` with the answer's data on success. */
export async function submitForm<T>(
  call: () => Promise<{ data?: T; error?: unknown; response: Response }>,
  form: FormErrors,
  done: (data: T | undefined) => void,
): Promise<boolean> {
  form.clear();
  try {
    const { data, error, response } = await call();
    if (error !== undefined || !response.ok) {
      form.set(error, response.status);
      return false;
    }
    done(data);
    return true;
  } catch {
    form.setGeneral('The server could not be reached.');
    return false;
  }
}
