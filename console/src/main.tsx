/**
 * The console's shell: sign-in, the navigation, the "slow down" banner, and the pages by the URL's
 * hash (#/overview, #/messages, #/messages/<id>, #/conversations,
 * #/conversations/<number>, #/compose, #/scheduled,
 * #/contacts, #/groups, #/keywords, #/media, #/webhooks). The hash never holds the token.
 */
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './app.css';
import { createApi, forgetToken, storedToken, storeToken } from './api.ts';
import { SignIn } from './pages/sign-in.tsx';
import { Overview } from './pages/overview.tsx';
import { Messages } from './pages/messages.tsx';
import { MessageDetails } from './pages/message-details.tsx';
import { Compose } from './pages/compose.tsx';
import { Conversations } from './pages/conversations.tsx';
import { ScheduledMessages } from './pages/scheduled.tsx';
import { Contacts } from './pages/contacts.tsx';
import { Groups } from './pages/groups.tsx';
import { Keywords } from './pages/keywords.tsx';
import { MediaAndTemplates } from './pages/media.tsx';
import { Webhooks } from './pages/webhooks.tsx';

function currentRoute(): string {
  return location.hash.replace(/^#\/?/, '') || 'overview';
}

const PAGES: readonly { route: string; label: string }[] = [
  { route: 'overview', label: 'Overview' },
  { route: 'messages', label: 'Messages' },
  { route: 'conversations', label: 'Conversations' },
  { route: 'compose', label: 'Compose' },
  { route: 'scheduled', label: 'Scheduled' },
  { route: 'contacts', label: 'Contacts' },
  { route: 'groups', label: 'Groups' },
  { route: 'keywords', label: 'Keywords' },
  { route: 'media', label: 'Media and templates' },
  { route: 'webhooks', label: 'Webhooks' },
];

function App() {
  const [token, setToken] = useState(storedToken());
  const [route, setRoute] = useState(currentRoute());
  const [slowDown, setSlowDown] = useState<number | null>(null);
  const [expired, setExpired] = useState(false);

  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const api = useMemo(
    () =>
      token === undefined
        ? undefined
        : createApi(token, {
            unauthorized: () => {
              setExpired(true);
              setToken(undefined);
            },
            slowDown: (seconds) => setSlowDown(seconds === undefined ? null : seconds),
          }),
    [token],
  );

  if (api === undefined) {
    return (
      <SignIn
        expired={expired}
        onSignIn={(value) => {
          storeToken(value);
          setExpired(false);
          setToken(value);
        }}
      />
    );
  }

  const [page, id] = route.split('/');
  let content;
  if (page === 'messages' && id) content = <MessageDetails api={api} id={id} />;
  else if (page === 'messages') content = <Messages api={api} />;
  else if (page === 'conversations') content = <Conversations api={api} phone={id ? decodeURIComponent(id) : undefined} />;
  else if (page === 'compose') content = <Compose api={api} />;
  else if (page === 'scheduled') content = <ScheduledMessages api={api} />;
  else if (page === 'contacts') content = <Contacts api={api} />;
  else if (page === 'groups') content = <Groups api={api} />;
  else if (page === 'keywords') content = <Keywords api={api} />;
  else if (page === 'media') content = <MediaAndTemplates api={api} />;
  else if (page === 'webhooks') content = <Webhooks api={api} />;
  else content = <Overview api={api} />;

  return (
    <>
      <header class="top">
        <span class="brand">msgsvc</span>
        <nav aria-label="Pages">
          {PAGES.map((p) => (
            <a key={p.route} href={`#/${p.route}`} aria-current={(page || 'overview') === p.route ? 'page' : undefined}>
              {p.label}
            </a>
          ))}
        </nav>
        <button
          type="button"
          class="link"
          onClick={() => {
            forgetToken();
            setToken(undefined);
          }}
        >
          Sign out
        </button>
      </header>
      {slowDown !== null && (
        <p class="banner" role="status">
          Slow down: the API's rate limit was reached. Retrying {slowDown ? `in ${slowDown} s` : 'shortly'}…
        </p>
      )}
      <main>{content}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
