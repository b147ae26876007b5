/**
 * A scheduled message's recurrence (`RRule`, docs/API.md §14.3.3): a small builder for what most
 * people want (FREQ DAILY, WEEKLY, MONTHLY or YEARLY; INTERVAL; BYDAY on a weekly rule; COUNT or
 * UNTIL) or, for anything else, the rule as text. The value is the rule exactly as it will be sent
 * (`""`: it does not repeat); the server checks it (`R Rule is invalid.`).
 */
import { useState } from 'preact/hooks';
import { FieldMessage, type FormErrors } from './fields.tsx';

type Freq = 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'YEARLY';
const FREQS: readonly [Freq, string, string, string][] = [
  ['DAILY', 'Daily', 'day', 'days'],
  ['WEEKLY', 'Weekly', 'week', 'weeks'],
  ['MONTHLY', 'Monthly', 'month', 'months'],
  ['YEARLY', 'Yearly', 'year', 'years'],
];
const DAYS: readonly [string, string][] = [
  ['MO', 'Monday'],
  ['TU', 'Tuesday'],
  ['WE', 'Wednesday'],
  ['TH', 'Thursday'],
  ['FR', 'Friday'],
  ['SA', 'Saturday'],
  ['SU', 'Sunday'],
];

/** What the builder can show: a rule of these parts only, else the rule is edited as text. */
interface Built {
  freq: Freq;
  interval: string;
  byDay: string[];
  end: 'never' | 'count' | 'until';
  count: string;
  /** `YYYY-MM-DD` (an input's value); sent as `YYYYMMDD`. */
  until: string;
}

/** The parts of a rule (`FREQ=WEEKLY;COUNT=3` → {FREQ: 'WEEKLY', COUNT: '3'}), upper-cased; undefined when malformed or repeated. */
function parts(rule: string): Map<string, string> | undefined {
  const map = new Map<string, string>();
  for (const part of rule.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    const name = part.slice(0, eq).trim().toUpperCase();
    if (map.has(name)) return undefined;
    map.set(
      name,
      part
        .slice(eq + 1)
        .trim()
        .toUpperCase(),
    );
  }
  return map;
}

/** The builder's state of `rule`, or undefined when the builder cannot show it (a custom rule). */
function readBuilt(rule: string): Built | undefined {
  const map = parts(rule);
  if (map === undefined) return undefined;
  const freq = map.get('FREQ') as Freq | undefined;
  if (freq === undefined || !FREQS.some(([f]) => f === freq)) return undefined;
  for (const name of map.keys()) if (!['FREQ', 'INTERVAL', 'BYDAY', 'COUNT', 'UNTIL'].includes(name)) return undefined;
  const interval = map.get('INTERVAL') ?? '1';
  const byDay = map.get('BYDAY')?.split(',') ?? [];
  if (!/^[1-9]\d*$/.test(interval)) return undefined;
  if (byDay.length > 0 && (freq !== 'WEEKLY' || byDay.some((d) => !DAYS.some(([code]) => code === d)))) return undefined;
  const count = map.get('COUNT');
  const until = map.get('UNTIL');
  if (count !== undefined && (until !== undefined || !/^[1-9]\d*$/.test(count))) return undefined;
  if (until !== undefined && !/^\d{8}$/.test(until)) return undefined;
  return {
    freq,
    interval,
    byDay,
    end: count !== undefined ? 'count' : until !== undefined ? 'until' : 'never',
    count: count ?? '10',
    until: until === undefined ? '' : `${until.slice(0, 4)}-${until.slice(4, 6)}-${until.slice(6, 8)}`,
  };
}

/** The rule of the builder's state, parts in the order FREQ, INTERVAL, BYDAY, COUNT or UNTIL. */
function writeBuilt(b: Built): string {
  const out = [`FREQ=${b.freq}`];
  if (b.interval.trim() !== '' && b.interval.trim() !== '1') out.push(`INTERVAL=${b.interval.trim()}`);
  if (b.freq === 'WEEKLY' && b.byDay.length > 0)
    out.push(
      `BYDAY=${DAYS.filter(([d]) => b.byDay.includes(d))
        .map(([d]) => d)
        .join(',')}`,
    );
  if (b.end === 'count') out.push(`COUNT=${b.count.trim()}`);
  if (b.end === 'until' && b.until !== '') out.push(`UNTIL=${b.until.replaceAll('-', '')}`);
  return out.join(';');
}

/** A rule in words ("Every 2 weeks on Monday and Friday, 10 times"), or "" when the builder cannot read it. */
export function describeRRule(rule: string): string {
  if (rule === '') return '';
  const b = readBuilt(rule);
  if (b === undefined) return '';
  const [, , one, many] = FREQS.find(([f]) => f === b.freq)!;
  const n = Number(b.interval);
  let text = n === 1 ? `Every ${one}` : `Every ${n} ${many}`;
  if (b.byDay.length > 0) {
    const names = DAYS.filter(([d]) => b.byDay.includes(d)).map(([, name]) => name);
    text += ` on ${names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`}`;
  }
  if (b.end === 'count') text += `, ${b.count} ${b.count === '1' ? 'time' : 'times'} in all`;
  if (b.end === 'until') text += `, until ${b.until} (included)`;
  return text;
}

const NONE: Built = { freq: 'WEEKLY', interval: '1', byDay: [], end: 'never', count: '10', until: '' };

/**
 * The recurrence of a scheduled message: "Does not repeat", a builder, or "Custom rule" (the rule
 * as text). `value` is the rule sent; `onChange` gets each new one.
 */
export function RecurrenceField(props: { id: string; value: string; onChange: (rule: string) => void; form?: FormErrors }) {
  const { id } = props;
  const initial = readBuilt(props.value);
  const [mode, setMode] = useState<'' | Freq | 'custom'>(props.value === '' ? '' : initial === undefined ? 'custom' : initial.freq);
  const [built, setBuilt] = useState<Built>(initial ?? NONE);
  const update = (next: Built) => {
    setBuilt(next);
    props.onChange(writeBuilt(next));
  };
  const unit = FREQS.find(([f]) => f === built.freq)?.[3] ?? 'weeks';
  // The API's error on RRule goes under the control that holds the rule.
  const target = mode === 'custom' ? id : `${id}-freq`;
  const invalid = props.form?.aria('RRule', target) ?? {};
  return (
    <fieldset class="plain recurrence" data-testid="recurrence">
      <label for={`${id}-freq`}>Repeat</label>
      <select
        id={`${id}-freq`}
        value={mode}
        {...(mode === 'custom' ? {} : invalid)}
        onChange={(e) => {
          const next = e.currentTarget.value as typeof mode;
          setMode(next);
          if (next === '') props.onChange('');
          else if (next === 'custom') props.onChange(props.value === '' ? writeBuilt(built) : props.value);
          else update({ ...built, freq: next });
        }}
      >
        <option value="">Does not repeat</option>
        {FREQS.map(([f, label]) => (
          <option key={f} value={f}>
            {label}
          </option>
        ))}
        <option value="custom">Custom rule (RFC 5545 text)</option>
      </select>
      {mode !== '' && mode !== 'custom' && (
        <>
          <label for={`${id}-interval`}>Every how many {unit}</label>
          <input
            id={`${id}-interval`}
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            value={built.interval}
            onInput={(e) => update({ ...built, interval: e.currentTarget.value })}
          />
          {built.freq === 'WEEKLY' && (
            <fieldset class="days">
              <legend>On these days (none: the day of the first time)</legend>
              {DAYS.map(([code, name]) => (
                <label key={code} class="check">
                  <input
                    type="checkbox"
                    checked={built.byDay.includes(code)}
                    onChange={(e) =>
                      update({
                        ...built,
                        byDay: e.currentTarget.checked ? [...built.byDay, code] : built.byDay.filter((d) => d !== code),
                      })
                    }
                  />
                  {name}
                </label>
              ))}
            </fieldset>
          )}
          <label for={`${id}-end`}>Ends</label>
          <select id={`${id}-end`} value={built.end} onChange={(e) => update({ ...built, end: e.currentTarget.value as Built['end'] })}>
            <option value="never">Never</option>
            <option value="count">After a number of times</option>
            <option value="until">On a date</option>
          </select>
          {built.end === 'count' && (
            <>
              <label for={`${id}-count`}>Times in all (the first included)</label>
              <input
                id={`${id}-count`}
                type="number"
                min={1}
                step={1}
                inputMode="numeric"
                value={built.count}
                onInput={(e) => update({ ...built, count: e.currentTarget.value })}
              />
            </>
          )}
          {built.end === 'until' && (
            <>
              <label for={`${id}-until`}>Last day (included)</label>
              <input
                id={`${id}-until`}
                type="date"
                value={built.until}
                onInput={(e) => update({ ...built, until: e.currentTarget.value })}
              />
            </>
          )}
        </>
      )}
      {mode === 'custom' && (
        <>
          <label for={id}>Rule (e.g. FREQ=MONTHLY;BYDAY=-1FR;COUNT=6)</label>
          <input
            id={id}
            autoComplete="off"
            spellcheck={false}
            value={props.value}
            {...invalid}
            onInput={(e) => props.onChange(e.currentTarget.value)}
          />
        </>
      )}
      {props.value !== '' && (
        <p class="hint" data-testid="rrule-text">
          {describeRRule(props.value) || 'A custom rule'}: <code>{props.value}</code>
        </p>
      )}
      {props.form !== undefined && <FieldMessage form={props.form} field="RRule" id={target} />}
    </fieldset>
  );
}
