import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { ErrorLine, submit } from './list.tsx';

type Settings = components['schemas']['AccountSettings'];

/** The IANA zones this browser knows, for the time zone box's suggestions (none where it cannot list them). */
function timeZones(): string[] {
  try {
    return (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  } catch {
    return [];
  }
}

/** The sender selections (docs/API.md §17) with what each does, in one line. */
const SELECTIONS: readonly { value: 'first' | 'pool'; label: string; words: string }[] = [
  { value: 'first', label: 'First number', words: 'A message without a number goes from the first Active number.' },
  {
    value: 'pool',
    label: 'Sender pool',
    words:
      "Each message gets a number when it is queued: the one the recipient last exchanged a message with, else a local one, else any, never past a number's limits.",
  },
];

/**
 * Account settings (docs/API.md §14.3.4, account/settings): the quiet hours, during which messages
 * wait, Queued, until they end in the recipient's local time, and the account's time zone (used for
 * recipients whose country has several). Both hours go together; both empty clear them. And which
 * number sends a message given none (`SenderSelection`, docs/API.md §17): the first Active number,
 * or the sender pool.
 */
export function AccountSettings(props: { api: Api }) {
  const { api } = props;
  const [settings, setSettings] = useState<Required<Settings> | undefined>();
  const [draft, setDraft] = useState<Required<Settings>>({
    QuietHoursStart: '',
    QuietHoursEnd: '',
    TimeZone: '',
    SenderSelection: 'first',
  });
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  const writable = api.can('account:write');

  const show = (data: Settings) => {
    const all = {
      QuietHoursStart: data.QuietHoursStart ?? '',
      QuietHoursEnd: data.QuietHoursEnd ?? '',
      TimeZone: data.TimeZone ?? '',
      SenderSelection: data.SenderSelection ?? 'first',
    };
    setSettings(all);
    setDraft(all);
  };

  useEffect(() => {
    let live = true;
    api
      .GET('/v1/account/settings')
      .then(({ data, error, response }) => {
        if (!live) return;
        if (error !== undefined || data === undefined) return setError(errorText(error, response.status));
        show(data);
      })
      .catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [api]);

  const zones = timeZones();
  if (settings === undefined)
    return (
      <>
        <h1>Account settings</h1>
        {error === undefined ? <p role="status">Loading…</p> : <ErrorLine error={error} />}
      </>
    );
  return (
    <>
      <h1>Account settings</h1>
      <form
        class="compose card"
        aria-label="Account settings"
        onSubmit={(e) => {
          e.preventDefault();
          setSaved(false);
          void submit(
            async () => {
              const answer = await api.PUT('/v1/account/settings', { body: draft });
              if (answer.data !== undefined) show(answer.data);
              return answer;
            },
            setError,
            () => setSaved(true),
          );
        }}
      >
        <h2>Quiet hours</h2>
        <p class="hint">
          A message whose turn comes inside the quiet hours of the recipient's local time waits until they end. A start later than the end
          spans midnight (22:00 to 07:00). STOP, START and HELP replies and keyword replies are never held.
        </p>
        <fieldset class="plain" disabled={!writable}>
          <legend class="visually-hidden">Quiet hours</legend>
          <label for="quiet-start">Quiet hours start</label>
          <input
            id="quiet-start"
            type="time"
            value={draft.QuietHoursStart}
            onInput={(e) => setDraft({ ...draft, QuietHoursStart: e.currentTarget.value })}
          />
          <label for="quiet-end">Quiet hours end</label>
          <input
            id="quiet-end"
            type="time"
            value={draft.QuietHoursEnd}
            onInput={(e) => setDraft({ ...draft, QuietHoursEnd: e.currentTarget.value })}
          />
          <label for="time-zone">Time zone</label>
          <input
            id="time-zone"
            list="time-zones"
            spellcheck={false}
            autocomplete="off"
            aria-describedby="time-zone-hint"
            value={draft.TimeZone}
            onInput={(e) => setDraft({ ...draft, TimeZone: e.currentTarget.value })}
          />
          <datalist id="time-zones">
            {zones.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
          <p class="hint" id="time-zone-hint">
            An IANA name such as America/New_York: used for recipients in countries with several time zones, and numbers without a country.
          </p>
        </fieldset>
        <h2>Sending number</h2>
        <fieldset class="plain" disabled={!writable}>
          <legend>Which number sends a message given none</legend>
          {SELECTIONS.map((o) => (
            <div key={o.value}>
              <label class="check">
                <input
                  type="radio"
                  name="sender-selection"
                  value={o.value}
                  checked={draft.SenderSelection === o.value}
                  aria-describedby={`sender-${o.value}-hint`}
                  onChange={() => setDraft({ ...draft, SenderSelection: o.value })}
                />
                {o.label}
              </label>
              <p class="hint" id={`sender-${o.value}-hint`}>
                {o.words}
              </p>
            </div>
          ))}
        </fieldset>
        <ErrorLine error={error} />
        {saved && (
          <p role="status" data-testid="settings-saved">
            Saved.
          </p>
        )}
        {writable && (
          <div class="actions">
            <button type="submit">Save settings</button>
            <button
              type="button"
              class="secondary"
              disabled={settings.QuietHoursStart === '' && draft.QuietHoursStart === ''}
              onClick={() => setDraft({ ...draft, QuietHoursStart: '', QuietHoursEnd: '' })}
            >
              No quiet hours
            </button>
          </div>
        )}
      </form>
    </>
  );
}
