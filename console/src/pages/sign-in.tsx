import { useState } from 'preact/hooks';
import { createMsgsvcClient } from '../../../clients/typescript/src/index.ts';
import { errorText } from '../api.ts';

/**
 * Sign-in: an access token (from `msgsvc tokens create`, or the demo banner), checked with
 * credits/balance before it is kept in sessionStorage for this tab.
 */
export function SignIn(props: { expired: boolean; onSignIn(token: string): void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(props.expired ? 'Your session ended: sign in again.' : undefined);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const value = token.trim();
    if (value === '') return setError('Enter an access token.');
    setBusy(true);
    setError(undefined);
    try {
      const api = createMsgsvcClient({ baseUrl: location.origin, accessToken: value, maxRetries: 3 });
      const { error, response } = await api.GET('/v1/credits/balance');
      if (response.status === 401) setError('This token is not valid.');
      else if (error !== undefined) setError(errorText(error, response.status));
      else props.onSignIn(value);
    } catch {
      setError('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in">
      <h1>Sign in to msgsvc</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label for="token">Access token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <p class="hint">The token is kept for this browser tab only, and is forgotten when the tab closes.</p>
        {error !== undefined && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
