import { useEffect, useState } from 'preact/hooks';
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { errorText, type Api, type Passkey } from '../api.ts';
import { createPasskey, passkeysSupported } from '../webauthn.ts';
import { ErrorLine, submit } from './list.tsx';
import { ConfirmButton, ShownOnce, When } from './ui.tsx';
import { Notice, useNotice } from './template-kit.tsx';

/**
 * Your security (docs/API.md §15, the console's own API): your password, two-factor sign-in (TOTP,
 * enrolled from a QR code, with 10 recovery codes shown once) and your passkeys. A person's page:
 * signed in with a key, there is nothing here to change.
 */
export function Security(props: { api: Api; onChange: () => void }) {
  const user = props.api.session.User;
  const { notice, say } = useNotice();
  if (user === null)
    return (
      <>
        <h1>Your security</h1>
        <p>
          You are signed in with the key “{props.api.session.Key?.Name}”. Passwords, two-factor sign-in and passkeys belong to people: sign
          in with your email to change yours.
        </p>
      </>
    );
  return (
    <>
      <h1>Your security</h1>
      <p class="hint">
        Signed in as <span class="text">{user.Email}</span> ({user.Role}).
      </p>
      <Notice notice={notice} />
      <ChangePassword api={props.api} />
      <TwoFactor api={props.api} on={user.TwoFactor === 1} onChange={props.onChange} say={say} />
      <Passkeys api={props.api} say={say} />
    </>
  );
}

function ChangePassword(props: { api: Api }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState(false);
  return (
    <form
      class="compose card"
      aria-labelledby="password-title"
      onSubmit={(e) => {
        e.preventDefault();
        setDone(false);
        if (next.length < 12) return setError('Password should contain at least 12 characters.');
        if (next !== again) return setError('The two new passwords differ.');
        void submit(
          () => props.api.own('PUT', '/console/api/password', { CurrentPassword: current, Password: next }),
          setError,
          () => {
            setCurrent('');
            setNext('');
            setAgain('');
            setDone(true);
          },
        );
      }}
    >
      <h2 id="password-title">Password</h2>
      <label for="current-password">Current password</label>
      <input
        id="current-password"
        type="password"
        autocomplete="current-password"
        value={current}
        onInput={(e) => setCurrent(e.currentTarget.value)}
      />
      <label for="changed-password">New password</label>
      <input
        id="changed-password"
        type="password"
        autocomplete="new-password"
        aria-describedby="changed-password-hint"
        value={next}
        onInput={(e) => setNext(e.currentTarget.value)}
      />
      <p class="hint" id="changed-password-hint">
        At least 12 characters, and not a common password.
      </p>
      <label for="changed-password-again">Repeat the new password</label>
      <input
        id="changed-password-again"
        type="password"
        autocomplete="new-password"
        value={again}
        onInput={(e) => setAgain(e.currentTarget.value)}
      />
      <ErrorLine error={error} />
      {done && <p role="status">Your password was changed.</p>}
      <button type="submit">Change password</button>
    </form>
  );
}

/** The otpauth URI as a QR code: an SVG of the `qrcode` package, shown as a data: image (no markup is inserted). */
function QrCode(props: { uri: string }) {
  const [src, setSrc] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    void import('qrcode')
      .then((qr) => qr.toString(props.uri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' }))
      .then((svg) => live && setSrc(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [props.uri]);
  return src === undefined ? (
    <p role="status">Drawing the QR code…</p>
  ) : (
    <img class="qr" src={src} width={200} height={200} alt="QR code to scan with your authenticator app" data-testid="qr" />
  );
}

/** Two-factor sign-in: enrol (2fa, then 2fa/confirm with a code: recovery codes shown once) or turn off (DELETE 2fa with a code). */
function TwoFactor(props: { api: Api; on: boolean; onChange: () => void; say: (text: string) => void }) {
  const [setup, setSetup] = useState<{ Secret: string; Uri: string } | undefined>();
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | undefined>();
  const [error, setError] = useState<string | undefined>();

  if (codes !== undefined)
    return (
      <ShownOnce
        title="Your recovery codes"
        value={codes.join('\n')}
        warning="Two-factor sign-in is on. Keep these 10 codes somewhere safe: each signs you in once instead of a code from your app, if you lose it. You will not see them again."
        onDone={() => {
          setCodes(undefined);
          props.say('Two-factor sign-in is on.');
          props.onChange();
        }}
      >
        <ol class="codes" data-testid="recovery-codes">
          {codes.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ol>
      </ShownOnce>
    );

  return (
    <section class="card" aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor sign-in</h2>
      <p data-testid="two-factor-state">
        {props.on
          ? 'On: signing in with your password also asks for a code from your authenticator app.'
          : 'Off: your password alone signs you in.'}
      </p>
      {props.on ? (
        <div class="compose" role="group" aria-label="Turn off two-factor sign-in">
          <label for="off-code">Current code from your app</label>
          <input
            id="off-code"
            inputMode="numeric"
            autocomplete="one-time-code"
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
          <ErrorLine error={error} />
          <ConfirmButton
            label="Turn off two-factor"
            question="Turn off two-factor sign-in? Your password alone will then sign you in."
            confirm="Turn it off"
            onConfirm={() =>
              submit(
                () => props.api.own('DELETE', '/console/api/2fa', { Code: code.trim() }),
                setError,
                () => {
                  setCode('');
                  props.say('Two-factor sign-in is off.');
                  props.onChange();
                },
              )
            }
          />
        </div>
      ) : setup === undefined ? (
        <>
          <ErrorLine error={error} />
          <button
            type="button"
            onClick={() =>
              void submit(
                async () => {
                  const answer = await props.api.own<{ Secret: string; Uri: string }>('POST', '/console/api/2fa');
                  if (answer.data !== undefined) setSetup(answer.data);
                  return answer;
                },
                setError,
                () => undefined,
              )
            }
          >
            Set up two-factor sign-in
          </button>
        </>
      ) : (
        <form
          class="compose"
          aria-label="Confirm two-factor sign-in"
          onSubmit={(e) => {
            e.preventDefault();
            void submit(
              async () => {
                const answer = await props.api.own<{ RecoveryCodes: string[] }>('POST', '/console/api/2fa/confirm', { Code: code.trim() });
                if (answer.data !== undefined) setCodes(answer.data.RecoveryCodes);
                return answer;
              },
              setError,
              () => {
                setSetup(undefined);
                setCode('');
              },
            );
          }}
        >
          <p>Scan this code with your authenticator app, or type the key below into it, then enter the 6 digits it shows.</p>
          <QrCode uri={setup.Uri} />
          <p>
            Key:{' '}
            <code class="secret" data-testid="totp-secret">
              {setup.Secret}
            </code>
          </p>
          <label for="confirm-code">Code from your app</label>
          <input
            id="confirm-code"
            inputMode="numeric"
            autocomplete="one-time-code"
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
          <ErrorLine error={error} />
          <div class="actions">
            <button type="submit">Turn on two-factor</button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setSetup(undefined);
                setError(undefined);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/** Your passkeys (/console/api/passkeys): listed, added (WebAuthn registration) and removed (asked twice). */
function Passkeys(props: { api: Api; say: (text: string) => void }) {
  const [rows, setRows] = useState<Passkey[] | undefined>();
  const [tick, setTick] = useState(0);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let live = true;
    props.api
      .own<Passkey[]>('GET', '/console/api/passkeys')
      .then(({ data, error, response }) => {
        if (!live) return;
        if (data === undefined) return setError(errorText(error, response.status));
        setRows(data);
      })
      .catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [props.api, tick]);
  const reload = () => setTick((n) => n + 1);

  async function add(event: Event) {
    event.preventDefault();
    if (name.trim() === '') return setError('Name the passkey (e.g. "Work laptop").');
    setBusy(true);
    setError(undefined);
    try {
      const options = await props.api.own<PublicKeyCredentialCreationOptionsJSON>('POST', '/console/api/passkeys/options');
      if (options.data === undefined) return setError(errorText(options.error, options.response.status));
      let response;
      try {
        response = await createPasskey(options.data);
      } catch {
        return setError('No passkey was created: the browser was cancelled or refused.');
      }
      await submit(
        () => props.api.own('POST', '/console/api/passkeys', { Name: name.trim(), Response: response }),
        setError,
        () => {
          setName('');
          reload();
        },
      );
    } catch {
      setError('The server could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="card" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p class="hint">A passkey signs you in with this device's screen lock or a security key, instead of your password and code.</p>
      {rows === undefined ? (
        error === undefined && <p role="status">Loading…</p>
      ) : rows.length === 0 ? (
        <p>No passkeys.</p>
      ) : (
        <ul class="cards-list">
          {rows.map((p) => (
            <li key={p.Id} data-testid="passkey">
              <p>
                <strong class="text">{p.Name}</strong> · added <When value={p.DateCreated} /> · last used{' '}
                <When value={p.DateLastUsed} empty="never" />
              </p>
              <ConfirmButton
                label="Remove"
                ariaLabel={`Remove passkey ${p.Name}`}
                question={`Remove the passkey “${p.Name}”? It will no longer sign you in.`}
                confirm="Remove passkey"
                onConfirm={() =>
                  submit(
                    () => props.api.own('DELETE', `/console/api/passkeys?id=${p.Id}`),
                    setError,
                    () => {
                      props.say(`The passkey “${p.Name}” was removed.`);
                      reload();
                    },
                  )
                }
              />
            </li>
          ))}
        </ul>
      )}
      {passkeysSupported() ? (
        <form class="compose" aria-label="Add a passkey" onSubmit={(e) => void add(e)}>
          <label for="passkey-name">Passkey name</label>
          <input id="passkey-name" maxLength={64} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <ErrorLine error={error} />
          <button type="submit" disabled={busy}>
            {busy ? 'Waiting for the browser…' : 'Add a passkey'}
          </button>
        </form>
      ) : (
        <>
          <ErrorLine error={error} />
          <p class="hint">This browser cannot use passkeys.</p>
        </>
      )}
    </section>
  );
}
