/**
 * The console's shell: the session (sign-in, an invitation, sign-out), the navigation, the "slow
 * down" banner, and the pages by the URL's hash (#/overview, #/messages, #/messages/<id>,
 * #/conversations, #/conversations/<number>, #/compose, #/scheduled, #/contacts, #/groups,
 * #/keywords, #/media, #/webhooks, #/keys, #/people, #/subaccounts, #/subaccounts/<id>, #/audit,
 * #/settings, #/security, #/invite/<code>). The session is an HttpOnly cookie: no secret is kept by the page or put in a
 * URL (an invitation's code is in the fragment, which no server sees). Pages and actions the
 * session's scopes do not allow are not shown (the server refuses them anyway).
 *
 * The operator's session (docs/API.md §16.4, signed in with an operator key) has pages of its own
 * and none of an account's: #/operator-accounts, #/operator-accounts/<id>, #/operator-numbers,
 * #/operator-carriers, #/operator-usage, #/operator-audit. It makes no account call at all (`/v1`
 * answers it 401, which would sign it out).
 */
import { render } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './app.css';
import type { Scope } from '../../src/domain/scopes.ts';
import { go, placeHref, usePlace } from './route.ts';
import { createApi, loadSession, maybeSignedIn, noteSignedIn, signOut, type Api, type Session } from './api.ts';
import { Invite, SignIn } from './pages/sign-in.tsx';
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
import { Numbers } from './pages/numbers.tsx';
import { Ledger } from './pages/ledger.tsx';
import { CustomFields } from './pages/custom-fields.tsx';
import { Keys } from './pages/keys.tsx';
import { People } from './pages/people.tsx';
import { Subaccounts } from './pages/subaccounts.tsx';
import { useSubaccountsShown } from './pages/subaccount-kit.ts';
import { Audit } from './pages/audit.tsx';
import { AccountSettings } from './pages/settings.tsx';
import { Security } from './pages/security.tsx';
import { OperatorAccounts } from './pages/operator-accounts.tsx';
import { OperatorNumbers } from './pages/operator-numbers.tsx';
import { OperatorCarriers } from './pages/operator-carriers.tsx';
import { UsageSection } from './pages/subaccounts.tsx';

interface PageEntry {
  route: string;
  label: string;
  /** The page's title (document.title), when not its label. */
  title?: string;
  /** The scope its list needs: without it the page is not in the navigation. */
  scope?: Scope;
  /** Only for a person (not a key): their own password, two-factor and passkeys. */
  person?: boolean;
  /** The title of one of its records (`#/<route>/<id>`), e.g. `Contact 12`. */
  record?: (id: string) => string;
  /** Only where the server lets the credential reach sub-accounts (never in a sub-account: useSubaccountsShown). */
  parent?: boolean;
}

const PAGES: readonly PageEntry[] = [
  { route: 'overview', label: 'Overview' },
  { route: 'ledger', label: 'Credits', title: 'Credit ledger', scope: 'credits:read' },
  { route: 'messages', label: 'Messages', scope: 'sms:read', record: (id) => `Message ${id}` },
  { route: 'conversations', label: 'Conversations', scope: 'sms:read', record: (id) => `Conversation with ${id}` },
  { route: 'compose', label: 'Compose', scope: 'sms:write' },
  { route: 'scheduled', label: 'Scheduled', title: 'Scheduled messages', scope: 'sms:read' },
  { route: 'contacts', label: 'Contacts', scope: 'contacts:read', record: (id) => `Contact ${id}` },
  { route: 'fields', label: 'Custom fields', scope: 'fields:read' },
  { route: 'groups', label: 'Groups', scope: 'groups:read', record: (id) => `Group ${id}` },
  { route: 'keywords', label: 'Keywords', scope: 'keywords:read' },
  { route: 'media', label: 'Media and templates', scope: 'media:read' },
  { route: 'numbers', label: 'Numbers', scope: 'numbers:read' },
  { route: 'webhooks', label: 'Webhooks', scope: 'webhooks:read' },
  { route: 'keys', label: 'Keys', scope: 'keys:read' },
  { route: 'people', label: 'People', scope: 'users:read' },
  { route: 'subaccounts', label: 'Sub-accounts', scope: 'subaccounts:read', parent: true, record: (id) => `Sub-account ${id}` },
  { route: 'audit', label: 'Audit log', scope: 'audit:read' },
  { route: 'settings', label: 'Settings', title: 'Account settings', scope: 'account:read' },
  { route: 'security', label: 'Security', title: 'Your security', person: true },
];

/** The operator's pages (docs/API.md §16.4), the first one the default. */
const OPERATOR_PAGES: readonly PageEntry[] = [
  { route: 'operator-accounts', label: 'Accounts', record: (id) => `Account ${id}` },
  { route: 'operator-numbers', label: 'Numbers' },
  { route: 'operator-carriers', label: 'Carriers' },
  { route: 'operator-usage', label: 'Usage' },
  { route: 'operator-audit', label: 'Audit log' },
];

type State = { kind: 'loading' } | { kind: 'signed-out'; expired: boolean } | { kind: 'signed-in'; session: Session };

function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const place = usePlace();
  const [slowDown, setSlowDown] = useState<number | null>(null);

  /**
   * Asks the server who is signed in (at start, after a sign-in, or to refresh TwoFactor); a
   * browser that noted no session goes to sign-in without asking. A session noted but gone ended.
   */
  const refresh = async () => {
    if (!maybeSignedIn()) return setState({ kind: 'signed-out', expired: false });
    let session: Session | undefined;
    try {
      session = await loadSession();
    } catch {
      session = undefined;
    }
    noteSignedIn(session !== undefined);
    setState(session === undefined ? { kind: 'signed-out', expired: true } : { kind: 'signed-in', session });
  };
  /** After a sign-in or an accepted invitation: the cookie is set, the session is read. */
  const signedIn = () => {
    noteSignedIn(true);
    void refresh();
  };

  useEffect(() => {
    void refresh();
  }, []);

  const session = state.kind === 'signed-in' ? state.session : undefined;
  const api = useMemo(
    () =>
      session === undefined
        ? undefined
        : createApi(session, {
            unauthorized: () => {
              noteSignedIn(false);
              setState({ kind: 'signed-out', expired: true });
            },
            slowDown: (seconds) => setSlowDown(seconds === undefined ? null : seconds),
          }),
    [session],
  );

  // The operator signed in with an operator key (docs/API.md §16.4), or null for an account's session.
  const operatorKey = session?.Operator ?? null;
  const operator = operatorKey !== null;
  // The probe is an account call: never for the operator (its 401 would sign the operator out).
  const subaccountsShown = useSubaccountsShown(operator ? undefined : api);

  // The operator's place is one of its pages (or an invitation): any other, the overview by default, is its first.
  const known = !operator || place.page === 'invite' || OPERATOR_PAGES.some((p) => p.route === place.page);
  const { page, id } = known ? place : { page: OPERATOR_PAGES[0]!.route, id: undefined };
  useEffect(() => {
    if (!known) go(placeHref(page), true);
  }, [known, page]);
  const entry = (operator ? OPERATOR_PAGES : PAGES).find((p) => p.route === page);
  const title = id !== undefined && entry?.record ? entry.record(id) : (entry?.title ?? entry?.label ?? 'Overview');
  // The sign-in and invitation pages set their own titles.
  useLayoutEffect(() => {
    if (api !== undefined && page !== 'invite') document.title = `${title} · msgsvc console`;
  }, [api, page, title]);
  // A new page (or a new record, or the first page after sign-in) takes the focus to its heading, so
  // that a screen reader announces it and Tab starts from there, never from <body>.
  useEffect(() => {
    if (api !== undefined && page !== 'invite') focusHeading();
  }, [api, page, id]);

  if (page === 'invite' && id)
    return (
      <Invite
        code={id}
        onSignedIn={() => {
          location.hash = '#/overview';
          signedIn();
        }}
      />
    );
  if (state.kind === 'loading')
    return (
      <main>
        <p role="status">Loading…</p>
      </main>
    );
  if (api === undefined || session === undefined)
    return <SignIn expired={state.kind === 'signed-out' && state.expired} onSignedIn={signedIn} />;

  let content;
  if (operator) content = operatorContent(api, page);
  else if (page === 'messages' && id) content = <MessageDetails api={api} id={id} />;
  else if (page === 'messages') content = <Messages api={api} />;
  else if (page === 'conversations') content = <Conversations api={api} phone={id} />;
  else if (page === 'compose') content = <Compose api={api} />;
  else if (page === 'scheduled') content = <ScheduledMessages api={api} />;
  else if (page === 'contacts') content = <Contacts api={api} />;
  else if (page === 'fields') content = <CustomFields api={api} />;
  else if (page === 'ledger') content = <Ledger api={api} />;
  else if (page === 'numbers') content = <Numbers api={api} />;
  else if (page === 'groups') content = <Groups api={api} />;
  else if (page === 'keywords') content = <Keywords api={api} />;
  else if (page === 'media') content = <MediaAndTemplates api={api} />;
  else if (page === 'webhooks') content = <Webhooks api={api} />;
  else if (page === 'keys') content = <Keys api={api} />;
  else if (page === 'people') content = <People api={api} />;
  else if (page === 'subaccounts') content = <Subaccounts api={api} />;
  else if (page === 'audit') content = <Audit api={api} />;
  else if (page === 'settings') content = <AccountSettings api={api} />;
  else if (page === 'security') content = <Security api={api} onChange={() => void refresh()} />;
  else content = <Overview api={api} />;

  const who =
    operatorKey !== null
      ? `operator ${operatorKey.Name}`
      : session.User !== null
        ? session.User.Name || session.User.Email
        : `key ${session.Key?.Name ?? ''}`;
  const shown = operator
    ? OPERATOR_PAGES
    : PAGES.filter(
        (p) => (p.scope === undefined || api.can(p.scope)) && (!p.person || session.User !== null) && (!p.parent || subaccountsShown),
      );
  return (
    <>
      <a class="skip-link" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">msgsvc</span>
        <nav aria-label="Pages">
          {shown.map((p) => (
            <a key={p.route} href={`#/${p.route}`} aria-current={page === p.route ? 'page' : undefined}>
              {p.label}
            </a>
          ))}
        </nav>
        <span class="zone" data-testid="zone">
          Times in {session.TimeZone}
        </span>
        <span class="who">
          <span class="visually-hidden">Signed in as </span>
          <span data-testid="who">{who}</span>
        </span>
        <button
          type="button"
          class="link"
          onClick={() => {
            noteSignedIn(false);
            void signOut(session)
              .catch(() => undefined)
              .then(() => setState({ kind: 'signed-out', expired: false }));
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
      <main id="main" tabIndex={-1}>
        {content}
      </main>
    </>
  );
}

/** The operator's page `page` (its Accounts when none other). */
function operatorContent(api: Api, page: string) {
  if (page === 'operator-numbers') return <OperatorNumbers api={api} />;
  if (page === 'operator-carriers') return <OperatorCarriers api={api} />;
  if (page === 'operator-usage') return <UsageSection api={api} operator />;
  if (page === 'operator-audit') return <Audit api={api} operator />;
  return <OperatorAccounts api={api} />;
}

/**
 * Moves the focus to the page's first heading once it is drawn (a page may draw it after its
 * first answer): at most about a second of animation frames, then to <main> itself.
 */
function focusHeading(tries = 60): void {
  const heading = document.querySelector<HTMLElement>('main h1');
  if (heading) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: false });
    return;
  }
  if (tries > 0) requestAnimationFrame(() => focusHeading(tries - 1));
  else document.getElementById('main')?.focus();
}

/** The skip link: to <main>'s heading without changing the fragment (the fragment is the console's route). */
function skipToMain(event: Event): void {
  event.preventDefault();
  focusHeading(0);
}

render(<App />, document.getElementById('app')!);
