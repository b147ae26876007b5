/**
 * The two quota inputs of a sub-account (docs/API.md §16.1 `MaxPerSecond`, `MaxPerDay`), shared by
 * the create form and a sub-account's edit form: ids `{prefix}-per-second` and `{prefix}-per-day`;
 * with `setPerMonth`, a third for a number's `MaxRecipientsPerMonth` (docs/API.md §17, the numbers
 * page): id `{prefix}-per-month`.
 */
import { FieldMessage, type FormErrors } from './fields.tsx';

interface QuotaInputsProps {
  form: FormErrors;
  prefix: string;
  perSecond: string;
  setPerSecond: (v: string) => void;
  perDay: string;
  setPerDay: (v: string) => void;
  /** A number's distinct recipients a month (shown only with `setPerMonth`). */
  perMonth?: string;
  setPerMonth?: (v: string) => void;
  /** The id of a hint that describes both inputs while they have no error. */
  hintId?: string;
}

export function QuotaInputs(props: QuotaInputsProps) {
  const one = (
    field: 'MaxPerSecond' | 'MaxPerDay' | 'MaxRecipientsPerMonth',
    id: string,
    label: string,
    value: string,
    set: (v: string) => void,
  ) => {
    const aria = props.form.aria(field, id);
    return (
      <div>
        <label for={id}>{label}</label>
        <input
          id={id}
          inputMode="numeric"
          autoComplete="off"
          value={value}
          onInput={(e) => set(e.currentTarget.value)}
          {...(aria['aria-describedby'] === undefined && props.hintId !== undefined ? { 'aria-describedby': props.hintId } : aria)}
        />
        <FieldMessage form={props.form} field={field} id={id} />
      </div>
    );
  };
  return (
    <>
      {one('MaxPerSecond', `${props.prefix}-per-second`, 'Max messages per second', props.perSecond, props.setPerSecond)}
      {one('MaxPerDay', `${props.prefix}-per-day`, 'Max messages per day', props.perDay, props.setPerDay)}
      {props.setPerMonth !== undefined &&
        one('MaxRecipientsPerMonth', `${props.prefix}-per-month`, 'Max recipients per month', props.perMonth ?? '', props.setPerMonth)}
    </>
  );
}
