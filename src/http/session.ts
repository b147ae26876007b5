import { serialize as serializeCookie } from 'cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { resolveSession } from '../domain/credentials.ts';
import { resolveOperatorSession } from '../domain/operators.ts';
import type { Principal } from '../domain/principal.ts';
import * as signIn from '../domain/sign-in.ts';
import type { Store } from '../domain/store.ts';
import { hashToken } from '../domain/tokens.ts';
import { viewUser } from '../domain/users.ts';
import { accountName } from '../domain/accounts.ts';
import { auditedStore, setAuditStatus, writeAuditEntry, type AuditEntry } from '../domain/audit.ts';
import { createTimeFormat, systemClock, type Clock } from '../lib/time.ts';
import { userRecord } from '../records/users.ts';
import { readBody } from './plugins/body.ts';
import { negotiateHook } from './plugins/negotiate.ts';
import { INVALID_CREDENTIALS, SESSION_COOKIE, sessionCookieOf } from './plugins/auth.ts';
import { HttpError, setWireHeader } from './wire.ts';

/**
 * The console's session API (docs/API.md §15.3–15.4), outside /v1: sign-in (password and code,
 * a key, or a passkey), the session, sign-out, invites, one's own password, two-factor and
 * passkeys. Answers are JSON (or XML when asked), errors in the API's shapes. The cookie is
 * `msgsvc_session`: HttpOnly, SameSite=Strict, Path=/, Secure when MSGSVC_PUBLIC_URL is https, and
 * its value is never stored (only its SHA-256 hash).
 *
 * The routes that change a signed-in person's own settings rely on SameSite=Strict (the browser
 * never sends the cookie from another site) rather than X-CSRF-Token, which /v1 requires.
 */

export interface SessionRouteDeps {
  store: Store;
  config: Config;
  clock?: Clock;
}

/** The relying party of passkeys: MSGSVC_PUBLIC_URL's host and origin, else the request's own. */
function relyingParty(config: Config, request: FastifyRequest): { rpId: string; origin: string } {
  const origin = config.publicUrl !== undefined ? new URL(config.publicUrl).origin : `${request.protocol}://${request.host}`;
  return { rpId: new URL(origin).hostname, origin };
}

export function registerSessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  const clock = deps.clock ?? systemClock;
  const time = createTimeFormat(deps.config.timeZone);
  const toUser = userRecord(time);
  const secure = deps.config.publicUrl?.startsWith('https:') === true;
  const signInDeps = (request: FastifyRequest): signIn.SignInDeps => ({ store: deps.store, clock, ...relyingParty(deps.config, request) });
  const who = (request: FastifyRequest): signIn.Requester => ({ ip: request.ip, requestId: request.id });

  function setCookie(reply: FastifyReply, value: string, maxAge: number): void {
    reply.header('Set-Cookie', serializeCookie(SESSION_COOKIE, value, { httpOnly: true, sameSite: 'strict', path: '/', secure, maxAge }));
  }
  async function opened(reply: FastifyReply, session: Promise<signIn.NewSession>): Promise<FastifyReply> {
    const s = await session;
    setCookie(reply, s.cookie, s.maxAge);
    return reply.code(204).send();
  }
  /**
   * The live session of the request's cookie: an account's, or with `operator` also the
   * operator's (API.md §16.4), which only reading the session and signing out accept.
   * @throws HttpError 401.
   */
  async function current(request: FastifyRequest, operator = false): Promise<Principal> {
    const value = sessionCookieOf(request);
    const hash = value === undefined ? undefined : hashToken(value);
    const now = clock.nowSeconds();
    let principal = hash !== undefined ? await resolveSession(deps.store, hash, now, request.ip) : undefined;
    if (!principal && operator && hash !== undefined) principal = await resolveOperatorSession(deps.store, hash, now);
    if (!principal) throw new HttpError(401, INVALID_CREDENTIALS);
    return principal;
  }
  const fields = (request: FastifyRequest): Record<string, unknown> => ({ ...readBody(request) });
  /**
   * Runs a signed-in person's change of their own settings with its audit entry (API.md §15.5):
   * written in the change's transaction, its status corrected after the response when it differs.
   */
  async function audited<T>(
    request: FastifyRequest,
    operation: string,
    status: number,
    fn: (p: Principal, d: signIn.SignInDeps) => Promise<T>,
  ): Promise<T> {
    const p = await current(request);
    const entry: AuditEntry = {
      accountId: p.accountId,
      actor: p.actor,
      ip: request.ip,
      operation,
      objectId: '',
      status,
      requestId: request.id,
      at: clock.nowSeconds(),
    };
    request.auditEntry = entry;
    return fn(p, { ...signInDeps(request), store: auditedStore(deps.store, entry) });
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an async plugin: a throw while registering rejects app.ready()
  app.register(async (api) => {
    api.addHook('onRequest', negotiateHook);
    api.addHook('onResponse', (request, reply, done) => {
      const entry = request.auditEntry;
      if (entry === undefined || (entry.entryId !== undefined && entry.status === reply.statusCode)) return done();
      const write =
        entry.entryId !== undefined
          ? setAuditStatus(deps.store, entry.entryId, reply.statusCode)
          : writeAuditEntry(deps.store, { ...entry, status: reply.statusCode });
      write.catch((err: unknown) => request.log.error({ err, reqId: request.id }, 'audit entry not written'));
      done();
    });
    api.addHook('onSend', (_request, reply, payload, done) => {
      // Nothing here may be cached: sessions, secrets, recovery codes.
      setWireHeader(reply, 'Cache-Control', 'no-store');
      done(null, payload);
    });

    api.post('/console/api/session', async (request, reply) => {
      const input = fields(request);
      const d = signInDeps(request);
      if (Object.hasOwn(input, 'Key')) return opened(reply, signIn.signInWithKey(d, who(request), input));
      if (Object.hasOwn(input, 'Passkey')) return opened(reply, signIn.signInWithPasskey(d, who(request), input));
      return opened(reply, signIn.signInWithPassword(d, who(request), input));
    });
    api.get('/console/api/session', async (request) => {
      const p = await current(request, true);
      if (p.operatorId !== undefined) {
        // The operator's session (API.md §16.4): no account, no person, no account key.
        const name = p.actor.split(':').slice(2).join(':');
        const operator = { Id: p.operatorId, Name: name };
        return {
          User: null,
          Key: null,
          Account: null,
          Operator: operator,
          Scopes: p.scopes,
          CsrfToken: p.csrf,
          TimeZone: deps.config.timeZone,
        };
      }
      const user = p.userId !== undefined ? toUser(await viewUser(deps, p.accountId, String(p.userId))) : null;
      const key = p.keyId !== undefined ? { Id: p.keyId, Name: p.actor.split(':').slice(2).join(':') } : null;
      return {
        User: user,
        Key: key,
        Account: { Id: p.accountId, Name: (await accountName(deps.store, p.accountId)) ?? '' },
        Operator: null,
        Scopes: p.scopes,
        CsrfToken: p.csrf,
        // Every date of every record is written in this zone (MSGSVC_TIMEZONE): the console names it once, in its header.
        TimeZone: deps.config.timeZone,
      };
    });
    api.delete('/console/api/session', async (request, reply) => {
      const p = await current(request, true);
      if (p.operatorId !== undefined) await signIn.signOutOperator(deps, p.sessionId!);
      else await signIn.signOut({ store: deps.store, clock }, who(request), { id: p.sessionId!, accountId: p.accountId, actor: p.actor });
      setCookie(reply, '', 0);
      return reply.code(204).send();
    });
    api.post('/console/api/invite', async (request, reply) =>
      opened(reply, signIn.acceptInvite(signInDeps(request), who(request), fields(request))),
    );
    api.put('/console/api/password', async (request, reply) => {
      await audited(request, 'password.update', 204, (p, d) => signIn.changePassword(d, p.userId, fields(request)));
      return reply.code(204).send();
    });

    api.post('/console/api/2fa', async (request) => audited(request, '2fa.create', 200, (p, d) => signIn.beginTwoFactor(d, p.userId)));
    api.post('/console/api/2fa/confirm', async (request) =>
      audited(request, '2fa.confirm', 200, (p, d) => signIn.confirmTwoFactor(d, p.userId, fields(request))),
    );
    api.delete('/console/api/2fa', async (request, reply) => {
      await audited(request, '2fa.delete', 204, (p, d) => signIn.disableTwoFactor(d, p.userId, fields(request)));
      return reply.code(204).send();
    });

    const passkeyRecord = (p: { id: number; name: string; created_at: number; last_used_at: number | null }) => ({
      Id: p.id,
      Name: p.name,
      DateCreated: time.dateTime(Number(p.created_at)),
      DateLastUsed: p.last_used_at === null ? null : time.dateTime(Number(p.last_used_at)),
    });
    api.get('/console/api/passkeys', async (request) =>
      (await signIn.listPasskeys(signInDeps(request), (await current(request)).userId)).map(passkeyRecord),
    );
    api.post('/console/api/passkeys/options', async (request) =>
      audited(request, 'passkeys.options', 200, (p, d) => signIn.passkeyRegistrationOptions(d, p.userId)),
    );
    api.post('/console/api/passkeys', async (request, reply) => {
      const row = await audited(request, 'passkeys.create', 201, (p, d) => signIn.registerPasskey(d, p.userId, fields(request)));
      return reply.code(201).send(passkeyRecord(row));
    });
    api.delete('/console/api/passkeys', async (request, reply) => {
      const id = request.queryParams.get('id');
      await audited(request, 'passkeys.delete', 204, async (p, d) => {
        if (typeof id === 'string' && request.auditEntry) request.auditEntry.objectId = id;
        if (typeof id !== 'string' || !(await signIn.deletePasskey(d, p.userId, id))) {
          throw new HttpError(404, `Object not found: ${typeof id === 'string' ? id : ''}`);
        }
      });
      return reply.code(204).send();
    });
    api.post('/console/api/passkeys/sign-in', async (request) => signIn.passkeySignInOptions(signInDeps(request)));
  });
}
