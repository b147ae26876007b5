import { useState } from 'preact/hooks';
import type { MsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText } from '../api.ts';
import { textCost } from '../cost.ts';

/**
 * Compose: one SMS to a number, now (sms/send). The counter below the text uses the server's own
 * segment rule (../cost.ts); after sending, the message's page shows it until it is delivered.
 */
export function Compose(props: { api: MsgsvcClient }) {
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const cost = textCost(text);

  async function send(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { data, error, response } = await props.api.POST('/v1/sms/send', { body: { MobilePhone: to, Message: text } });
      if (error !== undefined) return setError(errorText(error, response.status));
      const id = data[0]?.Id;
      location.hash = id === undefined ? '#/messages' : `#/messages/${id}`;
    } catch {
      setError('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <h1>Compose</h1>
      <form class="compose" onSubmit={(e) => void send(e)}>
        <label for="to">To (mobile number)</label>
        <input id="to" name="to" type="tel" autocomplete="off" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        <label for="text">Message</label>
        <textarea id="text" name="text" rows={5} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <p class="hint" id="counter" data-testid="counter" aria-live="polite">
          {cost.units} {cost.encoding === 'GSM-7' ? 'GSM-7 characters' : 'UCS-2 characters'} · {cost.segments}{' '}
          {cost.segments === 1 ? 'segment' : 'segments'} · {cost.credits} {cost.credits === 1 ? 'credit' : 'credits'}
        </p>
        {error !== undefined && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : 'Send now'}
        </button>
      </form>
    </>
  );
}
