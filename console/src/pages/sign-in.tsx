import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { acceptInvite, consoleRequest, errorFields, errorText, signIn, type Answer, type SignInBody } from '../api.ts';
import { passkeysSupported, requestPasskey } from '../webauthn.ts';

/** What a failed sign-in says: the 422's messages, a 429's wait, or the status. */
function failure(answer: Answer<unknown>): string {
  if (answer.response.status === 429) {
    const seconds = Number(answer.response.headers.get('Retry-After'));
    const wait =
      !Number.isFinite(seconds) || seconds <= 0 ? 'later' : seconds < 90 ? `in ${seconds} s` : `in ${Math.ceil(seconds / 60)} min`;
    return `Too many attempts: try again ${wait}.`;
  }
  return errorText(answer.error, answer.response.status);
}

/**
 * Sign-in (docs/API.md §15): a person's email and password, then their two-factor code when the
 * server asks for it (`Code cannot be blank.`); a passkey; or, for developers, a key's secret.
 * Each gives the HttpOnly session cookie; `onSignedIn` then loads the session.
 */
export function SignIn(props: { expired: boolean; onSignedIn(): void }) {
  const [mode, setMode] = useState<'password' | 'key'>('password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(props.expired ? 'Your session ended: sign in again.' : undefined);
  const [busy, setBusy] = useState(false);
  const codeInput = useRef<HTMLInputElement>(null);

  useLayoutEffect(() => {
    document.title = 'Sign in · msgsvc console';
  }, []);
  useEffect(() => {
    if (needsCode) codeInput.current?.focus();
  }, [needsCode]);

  async function attempt(body: SignInBody) {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await signIn(body);
      if (answer.response.ok) return props.onSignedIn();
      const fields = errorFields(answer.error);
      if ('Email' in body && fields.some((f) => f.field === 'Code')) {
        setNeedsCode(true);
        // The first answer only says a code is needed: ask for it without an error.
        if (fields.every((f) => f.message === 'Code cannot be blank.') && (body.Code ?? '') === '') return;
      }
      setError(failure(answer));
    } catch {
      setError('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  async function withPasskey() {
    setBusy(true);
    setError(undefined);
    try {
      const challenge = await consoleRequest<{ ChallengeId: string; Options: PublicKeyCredentialRequestOptionsJSON }>(
        'POST',
        '/console/api/passkeys/sign-in',
      );
      if (challenge.data === undefined) return setError(failure(challenge));
      let passkey;
      try {
        passkey = await requestPasskey(challenge.data.Options);
      } catch {
        return setError('No passkey was used: the browser was cancelled or has none for this site.');
      }
      setBusy(false);
      await attempt({ ChallengeId: challenge.data.ChallengeId, Passkey: passkey });
    } catch {
      setError('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  const errorLine = error !== undefined && (
    <p class="error" role="alert">
      {error}
    </p>
  );

  return (
    <main class="sign-in">
      <h1>Sign in to msgsvc</h1>
      {mode === 'password' ? (
        <>
          <form
            aria-label="Sign in with email and password"
            onSubmit={(e) => {
              e.preventDefault();
              if (email.trim() === '' || password === '') return setError('Enter your email address and password.');
              void attempt({ Email: email.trim(), Password: password, ...(needsCode ? { Code: code.trim() } : {}) });
            }}
          >
            <label for="email">Email</label>
            <input
              id="email"
              name="email"
              type="email"
              autocomplete="username"
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
            <label for="password">Password</label>
            <input
              id="password"
              name="password"
              type="password"
              autocomplete="current-password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
            {needsCode && (
              <>
                <label for="code">Two-factor code</label>
                <input
                  id="code"
                  name="code"
                  ref={codeInput}
                  inputMode="numeric"
                  autocomplete="one-time-code"
                  aria-describedby="code-hint"
                  value={code}
                  onInput={(e) => setCode(e.currentTarget.value)}
                />
                <p class="hint" id="code-hint">
                  The 6 digits your authenticator app shows, or one of your recovery codes.
                </p>
              </>
            )}
            {errorLine}
            <button type="submit" disabled={busy}>
              {busy ? 'Signing in…' : 'Sign in'}
            </button>
          </form>
          <div class="sign-in-other">
            {passkeysSupported() && (
              <button type="button" class="secondary" disabled={busy} onClick={() => void withPasskey()}>
                Sign in with a passkey
              </button>
            )}
            <button
              type="button"
              class="link"
              onClick={() => {
                setError(undefined);
                setMode('key');
              }}
            >
              Sign in with a key
            </button>
          </div>
        </>
      ) : (
        <>
          <form
            aria-label="Sign in with a key"
            onSubmit={(e) => {
              e.preventDefault();
              if (key.trim() === '') return setError('Enter a key.');
              void attempt({ Key: key.trim() });
            }}
          >
            <label for="key">Key (access token)</label>
            <input
              id="key"
              name="key"
              type="password"
              autocomplete="off"
              spellcheck={false}
              aria-describedby="key-hint"
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
            />
            <p class="hint" id="key-hint">
              For developers: a key from <code>msgsvc tokens create</code> or the Keys page. The console acts with the key's scopes; the key
              is sent once and never kept by this page.
            </p>
            {errorLine}
            <button type="submit" disabled={busy}>
              {busy ? 'Signing in…' : 'Sign in'}
            </button>
          </form>
          <div class="sign-in-other">
            <button
              type="button"
              class="link"
              onClick={() => {
                setError(undefined);
                setMode('password');
              }}
            >
              Sign in with email and password
            </button>
          </div>
        </>
      )}
    </main>
  );
}

/**
 * An invitation (`#/invite/<code>`, the InviteUrl of users/create or users/reset): the person
 * chooses a password of at least 12 characters and is signed in (`POST /console/api/invite`).
 */
export function Invite(props: { code: string; onSignedIn(): void }) {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  useLayoutEffect(() => {
    document.title = 'Choose your password · msgsvc console';
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    if (password.length < 12) return setError('Password should contain at least 12 characters.');
    if (password !== again) return setError('The two passwords differ.');
    setBusy(true);
    setError(undefined);
    try {
      const answer = await acceptInvite(props.code, password);
      if (answer.response.ok) return props.onSignedIn();
      const fields = errorFields(answer.error);
      if (fields.some((f) => f.field === 'Code'))
        return setError('This invitation link is no longer valid (used, expired or unknown): ask for a new one.');
      setError(failure(answer));
    } catch {
      setError('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in">
      <h1>Choose your password</h1>
      <p>You were invited to an msgsvc account. Choose a password to sign in.</p>
      <form aria-label="Choose your password" onSubmit={(e) => void submit(e)}>
        <label for="new-password">New password</label>
        <input
          id="new-password"
          name="new-password"
          type="password"
          autocomplete="new-password"
          aria-describedby="new-password-hint"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <p class="hint" id="new-password-hint">
          At least 12 characters, and not a common password.
        </p>
        <label for="new-password-again">Repeat the password</label>
        <input
          id="new-password-again"
          name="new-password-again"
          type="password"
          autocomplete="new-password"
          value={again}
          onInput={(e) => setAgain(e.currentTarget.value)}
        />
        {error !== undefined && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Set password and sign in'}
        </button>
      </form>
    </main>
  );
}
