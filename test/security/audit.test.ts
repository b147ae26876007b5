/**
 * No secret, password, second-factor code or message text ever lands in the audit log or the
 * request log (docs/API.md §1.2, §15.5: "Entries never hold a secret, a password, a code or a
 * message's text"; the log's line of a request has its URL, with `access_token` masked), on each
 * store.
 *
 * Every operation is run once at least (every `/v1` operation and method registered, every
 * `/admin/v1` one, and the console's session API: sign-in with a password, with a key and as the
 * operator, invites, a password change, two-factor enrolment and confirmation with real TOTP codes
 * (otpauth), recovery codes, passkey routes, sign-out), carrying recognisable canaries: passwords
 * `PW-Sekr1t-…`, message texts `MSGTEXT-canary-…` (sms/send, send-group, preview, schedule,
 * update-scheduled, sandbox/inbound, keyword autoreplies, MMS templates), other body text
 * `BODYTEXT-canary-…` (contacts, custom field values, groups, notes), and the secrets the service
 * hands out once (keys' secrets from keys/create, keys/roll, subaccounts/keys, the operator's
 * accounts/keys; a webhook's secret; invite codes; the TOTP secret and the codes used; recovery
 * codes; session cookies and CSRF tokens; the operator key). The request log is captured at
 * LOG_LEVEL=trace; the audit log is read from the database (every column of every row) and through
 * `/v1/audit/index` and `/admin/v1/audit/index` (JSON and XML). Each canary is looked for raw,
 * URL-encoded (either case of escapes, `+` for spaces), JSON- and XML-escaped, base64 and
 * base64url (at each alignment) and hex; a 6-digit TOTP code as a number standing alone.
 *
 * So that the test cannot pass vacuously: every request is sent with its own X-Request-Id, and the
 * audit log must hold exactly the entries docs/API.md §15.5 and §16.4 prescribe (every write by a
 * key, a session or the operator whatever its status; every sign-in, failed sign-in of a known
 * email (the lockout's 429 included), sign-out and change of one's own settings; nothing for
 * reads, 401s, unknown emails or keys, a missing second-factor code, or the operator's sign-in),
 * each with its Operation, Actor, account and Status; the log has a line for every request; and
 * the canaries did reach the database where they belong.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import * as OTPAuth from 'otpauth';
import type { Operation } from '../../src/http/operation.ts';
import { ADMIN_OPERATIONS } from '../../src/http/admin/index.ts';
import { operationsFor } from '../../src/http/routes/index.ts';
import { hashToken } from '../../src/domain/tokens.ts';
import { createManualClock } from '../../src/lib/time.ts';
import { buildTestApp } from '../helpers/app.ts';
import { multipart, pngImage } from '../helpers/images.ts';
import { keyWith } from '../helpers/keys.ts';
import { fmtTime } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';
import { insertFailedDelivery } from '../helpers/tenancy.ts';
import { operatorKey } from '../http/admin/helpers.ts';

// ---------------------------------------------------------------- looking for a canary

/**
 * The base64 (or base64url) of `s` as it appears inside the encoding of any longer text holding
 * it, at each of the three alignments: only the characters that depend on `s` alone.
 */
function base64Pieces(s: string, encoding: 'base64' | 'base64url'): string[] {
  const bytes = Buffer.from(s);
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const b = Buffer.concat([Buffer.alloc(k), bytes]).toString(encoding);
    out.push(b.slice(k === 0 ? 0 : 4, 4 * Math.floor((k + bytes.length) / 3)));
  }
  return out;
}

/** Every writing of `secret` that matters in a log line or a database row. */
function forms(secret: string): string[] {
  const url = encodeURIComponent(secret);
  const out = new Set([
    secret,
    url,
    url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    url.replace(/%20/g, '+'),
    encodeURI(secret),
    JSON.stringify(secret).slice(1, -1),
    // JSON with every non-ASCII character escaped, as some serialisers write it.
    JSON.stringify(secret)
      .slice(1, -1)
      .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
    Buffer.from(secret).toString('hex'),
    Buffer.from(secret).toString('hex').toUpperCase(),
    ...base64Pieces(secret, 'base64'),
    ...base64Pieces(secret, 'base64url'),
  ]);
  return [...out].filter((f) => f.length >= 8);
}

/** What to look for: a secret in every form, or a 6-digit code standing alone (and its encodings). */
interface Canary {
  label: string;
  forms: string[];
  pattern?: RegExp;
}

function canary(label: string, secret: string): Canary {
  return { label, forms: forms(secret) };
}

/** A TOTP code: six digits not part of a longer number (nor the decimals of one), base64, hex. */
function codeCanary(label: string, code: string): Canary {
  assert.match(code, /^\d{6}$/);
  return {
    label,
    forms: [Buffer.from(code).toString('base64'), Buffer.from(code).toString('hex')],
    pattern: new RegExp(`(?<![0-9.])${code}(?![0-9])`),
  };
}

/** Every place each canary appears in each text: `[]` when none leaked. */
function leaks(texts: Record<string, string>, canaries: readonly Canary[]): string[] {
  const found: string[] = [];
  for (const [where, text] of Object.entries(texts))
    for (const c of canaries) {
      for (const f of c.forms) {
        const at = text.indexOf(f);
        if (at !== -1)
          found.push(`${c.label} as ${JSON.stringify(f)} in ${where}: …${text.slice(Math.max(0, at - 100), at + f.length + 60)}…`);
      }
      const m = c.pattern?.exec(text);
      if (m) found.push(`${c.label} in ${where}: …${text.slice(Math.max(0, m.index - 100), m.index + 60)}…`);
    }
  return found;
}

// ---------------------------------------------------------------- the run

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The entry docs/API.md §15.5 prescribes for a request: in which account, by whom, as what. */
interface Expected {
  account: number;
  actor: string;
  operation: string;
  objectId?: string;
}

interface Req {
  method?: Method;
  path: string;
  query?: string;
  /** JSON body. */
  body?: unknown;
  /** A body sent as it is, with its content type. */
  raw?: { payload: Buffer | string; contentType: string };
  token?: string;
  session?: { cookie: string; csrf?: string };
  ip?: string;
}

/** The Operation of a `/v1` or `/admin/v1` operation reached with `method` (API.md §15.5): its id, with the method added after the first. */
function operationName(op: Operation, method: string): string {
  return method === op.methods[0] ? op.id : `${op.id}.${method.toLowerCase()}`;
}

/** The routes of the console's session API (docs/API.md §15.4), which no registry lists. */
const CONSOLE_ROUTES = [
  'POST /console/api/session',
  'GET /console/api/session',
  'DELETE /console/api/session',
  'POST /console/api/invite',
  'PUT /console/api/password',
  'POST /console/api/2fa',
  'POST /console/api/2fa/confirm',
  'DELETE /console/api/2fa',
  'GET /console/api/passkeys',
  'POST /console/api/passkeys/options',
  'POST /console/api/passkeys',
  'DELETE /console/api/passkeys',
  'POST /console/api/passkeys/sign-in',
];

const r = randomBytes(4).toString('hex');
const MSG = `MSGTEXT-canary-${r}`;
const BODY = `BODYTEXT-canary-${r}`;
/** A message text with characters every encoding changes. */
const MESSAGE = `${MSG} "quoted" & <b> ünï/cødé+more ✓`;
const PW1 = `PW-Sekr1t-${r}-first "q" & ü/+`;
const PW2 = `PW-Sekr1t-${r}-second <b> ✓`;
const PW3 = `PW-Sekr1t-${r}-third`;
const PW_WRONG = `PW-Sekr1t-${r}-wrong guess`;

storeTest(
  'no secret, password, TOTP or recovery code, message text or body text lands in the request log or the audit log, across every operation; every write has its entry',
  async (t) => {
    const lines: string[] = [];
    const clock = createManualClock();
    const ctx = await buildTestApp(
      t,
      { LOG_LEVEL: 'trace' },
      { logDestination: { write: (line: string) => void lines.push(line) }, clock },
    );
    const demo = await ctx.seed('Audit');
    const P = demo.account.id;
    const K = demo.token;
    const op = await operatorKey(ctx, 'auditor', clock);
    const operatorActor = `operator:${op.id}:auditor`;
    const keyRow = await ctx.store.db
      .selectFrom('api_tokens')
      .select('id')
      .where('token_hash', '=', hashToken(K))
      .executeTakeFirstOrThrow();
    const keyActor = `key:${keyRow.id}:default`;

    const secrets: Canary[] = [
      canary('a message text', MESSAGE),
      canary('a message text', MSG),
      canary('a body text', BODY),
      ...[PW1, PW2, PW3, PW_WRONG].map((p) => canary('a password', p)),
      canary('the demo key', K),
      canary('the operator key', op.secret),
    ];
    const expected = new Map<string, Expected>();
    /** What each request was, for the messages. */
    const described = new Map<string, string>();
    const ran = new Set<string>();
    const registered = [...operationsFor(ctx.config), ...ADMIN_OPERATIONS];
    const byRoute = new Map<string, Operation>(registered.flatMap((o) => o.methods.map((m) => [`${m} ${o.path}`, o] as const)));
    let serial = 0;

    /**
     * Sends one request with its own X-Request-Id, checks its status, notes the route it ran and
     * the audit entry it must have: `audit` names the account and the actor (the Operation is the
     * operation's operationId by default, ObjectId the `id` sent), or is null when docs/API.md
     * §15.5 gives the request no entry (a read, a 401, an unknown email or key, the operator's
     * sign-in, a missing code). Any entry of a request not expected to have one fails the test.
     */
    async function run(
      req: Req,
      status: number,
      audit: Expected | null | { account: number; actor: string } = null,
    ): Promise<LightMyRequestResponse> {
      const method = req.method ?? 'GET';
      const requestId = `audit-${++serial}`;
      const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': requestId };
      const query: string[] = [];
      if (req.token !== undefined) query.push(`access_token=${encodeURIComponent(req.token)}`);
      if (req.query) query.push(req.query);
      if (req.session) {
        headers.cookie = req.session.cookie;
        if (req.session.csrf !== undefined) headers['x-csrf-token'] = req.session.csrf;
      }
      let payload: Buffer | string | undefined;
      if (req.raw) {
        headers['content-type'] = req.raw.contentType;
        payload = req.raw.payload;
      } else if (req.body !== undefined) {
        headers['content-type'] = 'application/json';
        payload = JSON.stringify(req.body);
      }
      const res = await ctx.app.inject({
        method,
        url: query.length ? `${req.path}?${query.join('&')}` : req.path,
        headers,
        remoteAddress: req.ip ?? '127.0.0.1',
        ...(payload !== undefined ? { payload } : {}),
      });
      assert.equal(res.statusCode, status, `${method} ${req.path}?${req.query ?? ''}: ${res.statusCode} ${res.body}`);
      const operation = byRoute.get(`${method} ${req.path}`);
      ran.add(`${method} ${req.path}`);
      if (audit) {
        const full: Expected =
          'operation' in audit
            ? audit
            : { ...audit, operation: operation ? operationName(operation, method) : `(no operation at ${req.path})` };
        const id = /(?:^|&)id=([^&]*)/.exec(req.query ?? '')?.[1];
        if (full.objectId === undefined && id !== undefined && operation) full.objectId = decodeURIComponent(id);
        expected.set(requestId, full);
        described.set(requestId, `${method} ${req.path}?${req.query ?? ''} → ${res.statusCode}`);
      }
      return res;
    }
    const asKey = (token: string) => ({ token });
    const v1 = (account: number, actor: string) => ({ account, actor });
    const json = <T>(res: LightMyRequestResponse) => res.json<T>();
    const cookieOf = (res: LightMyRequestResponse) => {
      const value = String(res.headers['set-cookie']).split(';')[0]!;
      secrets.push(canary('a session cookie', value.split('=')[1]!));
      return value;
    };
    const csrfOf = async (cookie: string) => {
      const csrf = json<{ CsrfToken: string }>(await run({ path: '/console/api/session', session: { cookie } }, 200)).CsrfToken;
      secrets.push(canary('a CSRF token', csrf));
      return csrf;
    };
    const inviteCode = (res: LightMyRequestResponse) => {
      const code = json<{ InviteUrl: string }>(res).InviteUrl.split('#/invite/')[1]!;
      secrets.push(canary('an invite code', code));
      return code;
    };
    const secretOf = (res: LightMyRequestResponse, label: string) => {
      const secret = json<{ Secret: string }>(res).Secret;
      secrets.push(canary(label, secret));
      return secret;
    };
    const mine = v1(P, keyActor);

    // ---- numbers, credits, settings
    const active = '15550100001';
    await run({ path: '/v1/numbers/index', ...asKey(K) }, 200);
    await run({ path: '/v1/numbers/view', query: `number=${active}`, ...asKey(K) }, 200);
    for (const method of ['PUT', 'PATCH'] as const)
      await run({ method, path: '/v1/numbers/update', query: `number=${active}`, body: { MaxPerDay: 1000 }, ...asKey(K) }, 200, {
        ...mine,
        operation: method === 'PUT' ? 'numbers.update' : 'numbers.update.patch',
        objectId: active,
      });
    await run({ path: '/v1/numbers/usage', ...asKey(K) }, 200);
    await run({ path: '/v1/credits/balance', ...asKey(K) }, 200);
    await run({ path: '/v1/credits/ledger', ...asKey(K) }, 200);
    await run({ path: '/v1/account/settings', ...asKey(K) }, 200);
    await run({ method: 'PUT', path: '/v1/account/settings', body: { TimeZone: 'UTC' }, ...asKey(K) }, 200, mine);
    await run({ method: 'PATCH', path: '/v1/account/settings', body: { SenderSelection: 'first' }, ...asKey(K) }, 200, mine);

    // ---- contacts, groups, custom fields
    const contact = json<{ Id: number }>(
      await run(
        {
          method: 'POST',
          path: '/v1/contacts/create',
          body: { Number: '+15550107001', FirstName: BODY, LastName: `${BODY} last`, City: BODY, Zip: '12345' },
          ...asKey(K),
        },
        201,
        mine,
      ),
    ).Id;
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        { method, path: '/v1/contacts/update', query: `id=${contact}`, body: { LastName: `${BODY} ${method}` }, ...asKey(K) },
        200,
        mine,
      );
    await run({ path: '/v1/contacts/view', query: `id=${contact}`, ...asKey(K) }, 200);
    await run({ path: '/v1/contacts/index', ...asKey(K) }, 200);
    await run({ path: '/v1/contacts/find', query: 'number=15550107001', ...asKey(K) }, 200);
    await run({ path: '/v1/contacts/consent', query: `id=${contact}`, ...asKey(K) }, 200);
    await run(
      {
        method: 'POST',
        path: '/v1/contacts/import',
        raw: { payload: `Number,FirstName,City\r\n+15550107002,${BODY},"${BODY}"\r\n`, contentType: 'text/csv' },
        ...asKey(K),
      },
      200,
      mine,
    );
    await run({ method: 'DELETE', path: '/v1/contacts/erase', query: 'number=15550107002', ...asKey(K) }, 204, mine);
    const group = json<{ Id: number }>(
      await run({ method: 'POST', path: '/v1/groups/create', body: { fname: `Group ${BODY}`, fnote: BODY }, ...asKey(K) }, 201, mine),
    ).Id;
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        {
          method,
          path: '/v1/groups/update',
          query: `id=${group}`,
          body: { fname: `Group ${BODY}`, fnote: `${BODY} ${method}` },
          ...asKey(K),
        },
        200,
        mine,
      );
    await run({ path: '/v1/groups/view', query: `id=${group}`, ...asKey(K) }, 200);
    await run({ path: '/v1/groups/index', ...asKey(K) }, 200);
    for (const action of ['add-contacts', 'remove-contacts'])
      await run(
        { method: 'POST', path: `/v1/groups/${action}`, query: `id=${group}`, body: { PhoneNumberIds: [contact] }, ...asKey(K) },
        200,
        mine,
      );
    const field = json<{ Id: number }>(
      await run({ method: 'POST', path: '/v1/custom-contact-fields/create', body: { fname: 'Canary field' }, ...asKey(K) }, 201, mine),
    ).Id;
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        { method, path: '/v1/custom-contact-fields/update', query: `id=${field}`, body: { fname: `Canary field ${method}` }, ...asKey(K) },
        200,
        mine,
      );
    await run({ path: '/v1/custom-contact-fields/view', query: `id=${field}`, ...asKey(K) }, 200);
    await run({ path: '/v1/custom-contact-fields/index', ...asKey(K) }, 200);
    const entry = json<{ Id: number }>(
      await run(
        {
          method: 'POST',
          path: '/v1/custom-contact-fields-entry/create',
          body: { frfield: field, frcontact: contact, fvalue: BODY },
          ...asKey(K),
        },
        201,
        mine,
      ),
    ).Id;
    for (const method of ['POST', 'PUT', 'PATCH'] as const)
      await run(
        {
          method,
          path: '/v1/custom-contact-fields-entry/update',
          query: `id=${entry}`,
          body: { frfield: field, frcontact: contact, fvalue: `${BODY} ${method}` },
          ...asKey(K),
        },
        200,
        mine,
      );
    await run({ path: '/v1/custom-contact-fields-entry/view', query: `id=${entry}`, ...asKey(K) }, 200);
    await run({ path: '/v1/custom-contact-fields-entry/index', ...asKey(K) }, 200);
    await run({ method: 'DELETE', path: '/v1/custom-contact-fields-entry/delete', query: `id=${entry}`, ...asKey(K) }, 204, mine);

    // ---- keywords, media, templates
    const keyword = json<{ Id: number }[]>(
      await run(
        {
          method: 'POST',
          path: '/v1/keyword/reserve',
          body: { Keyword: `CANARY${r}`, Number: active, AutoreplyMessage: MESSAGE },
          ...asKey(K),
        },
        201,
        mine,
      ),
    )[0]!.Id;
    await run({ path: '/v1/keyword/index', ...asKey(K) }, 200);
    await run({ path: '/v1/keyword/view', query: `id=${keyword}`, ...asKey(K) }, 200);
    await run({ path: '/v1/keyword/check', query: `Keyword=OTHERWORD&Number=${active}`, ...asKey(K) }, 200);
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        { method, path: '/v1/keyword/update', query: `id=${keyword}`, body: { AutoreplyMessage: `${MESSAGE} ${method}` }, ...asKey(K) },
        200,
        mine,
      );
    const png = multipart([{ name: 'file', filename: 'canary.png', type: 'image/png', data: pngImage(8, 8, () => [1, 2, 3]) }]);
    const media = json<{ Id: number }>(
      await run(
        { method: 'POST', path: '/v1/media/upload', raw: { payload: png.body, contentType: png.contentType }, ...asKey(K) },
        201,
        mine,
      ),
    ).Id;
    await run({ path: '/v1/media/index', ...asKey(K) }, 200);
    await run({ path: '/v1/media/view', query: `id=${media}`, ...asKey(K) }, 200);
    await run({ path: '/v1/media/download', query: `id=${media}`, ...asKey(K) }, 200);
    const template = json<{ Id: number }>(
      await run(
        {
          method: 'POST',
          path: '/v1/mms-templates/create',
          body: { Name: 'Canary template', Subject: MESSAGE, Message: MESSAGE, MediaIds: [media] },
          ...asKey(K),
        },
        201,
        mine,
      ),
    ).Id;
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        { method, path: '/v1/mms-templates/update', query: `id=${template}`, body: { Message: `${MESSAGE} ${method}` }, ...asKey(K) },
        200,
        mine,
      );
    await run({ path: '/v1/mms-templates/view', query: `id=${template}`, ...asKey(K) }, 200);
    await run({ path: '/v1/mms-templates/index', ...asKey(K) }, 200);

    // ---- messages
    const to = '+15550107003';
    await run({ method: 'POST', path: '/v1/sms/preview', body: { MobilePhone: to, Message: MESSAGE }, ...asKey(K) }, 200, mine);
    const message = json<{ Id: number }[]>(
      await run({ method: 'POST', path: '/v1/sms/send', body: { MobilePhone: to, Message: MESSAGE }, ...asKey(K) }, 201, mine),
    )[0]!.Id;
    const staff = demo.groups.find((g) => g.Name === 'Staff')!.Id;
    await run({ method: 'POST', path: '/v1/sms/send-group', body: { GroupId: staff, Message: MESSAGE }, ...asKey(K) }, 201, mine);
    await run({ path: '/v1/sms/index', ...asKey(K) }, 200);
    await run({ path: '/v1/sms/view', query: `id=${message}`, ...asKey(K) }, 200);
    await run({ path: '/v1/sms/links', query: `id=${message}`, ...asKey(K) }, 200);
    await run({ path: '/v1/sms/conversations', ...asKey(K) }, 200);
    await run({ path: '/v1/sms/stats', ...asKey(K) }, 200);
    await run({ path: '/v1/sms/export', ...asKey(K) }, 200);
    await run({ method: 'POST', path: '/v1/sms/mark-read', query: 'MobilePhone=15550107003', ...asKey(K) }, 204, mine);
    const later = fmtTime(clock.nowSeconds() + 86_400, ctx.config.timeZone);
    const scheduled = json<{ Id: number }>(
      await run(
        { method: 'POST', path: '/v1/sms/schedule', body: { MobilePhone: to, Message: MESSAGE, DateTime: later }, ...asKey(K) },
        201,
        mine,
      ),
    ).Id;
    await run({ path: '/v1/sms/single-schedule-messages', ...asKey(K) }, 200);
    await run({ path: '/v1/sms/view-scheduled', query: `id=${scheduled}`, ...asKey(K) }, 200);
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        { method, path: '/v1/sms/update-scheduled', query: `id=${scheduled}`, body: { Message: `${MESSAGE} ${method}` }, ...asKey(K) },
        200,
        mine,
      );
    await run({ method: 'DELETE', path: '/v1/sms/cancel-scheduled', query: `id=${scheduled}`, ...asKey(K) }, 204, mine);
    await run(
      { method: 'POST', path: '/v1/sandbox/inbound', body: { From: '+15550107004', To: active, Message: MESSAGE }, ...asKey(K) },
      201,
      mine,
    );
    await run({ path: '/v1/errors/index', ...asKey(K) }, 200);
    // Refused writes carrying a message text have their entries too (but a 401).
    const narrow = await keyWith(ctx, P, ['contacts:read']);
    secrets.push(canary('a key', narrow));
    const narrowId = (
      await ctx.store.db.selectFrom('api_tokens').select('id').where('token_hash', '=', hashToken(narrow)).executeTakeFirstOrThrow()
    ).id;
    await run(
      { method: 'POST', path: '/v1/sms/send', body: { MobilePhone: to, Message: MESSAGE }, ...asKey(narrow) },
      403,
      v1(P, `key:${narrowId}:scoped`),
    );
    await run(
      { method: 'POST', path: '/v1/sms/send', body: { MobilePhone: to, Message: `${MESSAGE}${'x'.repeat(1600)}` }, ...asKey(K) },
      422,
      mine,
    );
    await run(
      { method: 'POST', path: '/v1/sms/send', raw: { payload: `{"Message":"${MESSAGE}"`, contentType: 'application/json' }, ...asKey(K) },
      400,
      mine,
    );
    await run({ method: 'POST', path: '/v1/sms/send', body: { MobilePhone: to, Message: MESSAGE }, token: `${K}-unknown` }, 401);

    // ---- webhooks
    const hook = await run(
      {
        method: 'POST',
        path: '/v1/webhooks/create',
        body: { Url: 'https://hooks.example.com/audit', Events: ['message.sent'] },
        ...asKey(K),
      },
      201,
      mine,
    );
    const webhook = json<{ Id: number }>(hook).Id;
    secretOf(hook, 'a webhook secret');
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        { method, path: '/v1/webhooks/update', query: `id=${webhook}`, body: { Active: method === 'PUT' ? 0 : 1 }, ...asKey(K) },
        200,
        mine,
      );
    await run({ path: '/v1/webhooks/view', query: `id=${webhook}`, ...asKey(K) }, 200);
    await run({ path: '/v1/webhooks/index', ...asKey(K) }, 200);
    await run({ path: '/v1/webhooks/deliveries', query: `id=${webhook}`, ...asKey(K) }, 200);
    const delivery = { id: await insertFailedDelivery(ctx, P, webhook, 'msg_audit') };
    await run({ method: 'POST', path: '/v1/webhooks/redeliver', query: `id=${delivery.id}`, ...asKey(K) }, 200, mine);

    // ---- keys (the secret shown once by create and by roll)
    const created = await run(
      { method: 'POST', path: '/v1/keys/create', body: { Name: 'audit key', Scopes: ['*'] }, ...asKey(K) },
      201,
      mine,
    );
    const key2 = json<{ Id: number }>(created).Id;
    secretOf(created, 'a key secret (keys/create)');
    await run({ path: '/v1/keys/index', ...asKey(K) }, 200);
    await run({ path: '/v1/keys/view', query: `id=${key2}`, ...asKey(K) }, 200);
    for (const method of ['PUT', 'PATCH'] as const)
      await run({ method, path: '/v1/keys/update', query: `id=${key2}`, body: { Name: 'audit key' }, ...asKey(K) }, 200, mine);
    const rolled = secretOf(
      await run({ method: 'POST', path: '/v1/keys/roll', query: `id=${key2}`, body: { GraceSeconds: 0 }, ...asKey(K) }, 200, mine),
      'a key secret (keys/roll)',
    );

    // ---- people (invites, reset)
    const ownerEmail = 'canary-owner@audit.example';
    const invitedOwner = await run(
      { method: 'POST', path: '/v1/users/create', body: { Email: ownerEmail, Name: BODY, Role: 'owner' }, ...asKey(K) },
      201,
      mine,
    );
    const owner = json<{ Id: number }>(invitedOwner).Id;
    const ownerActor = `user:${owner}:${ownerEmail}`;
    const ownerCode = inviteCode(invitedOwner);
    const invitedMember = await run(
      { method: 'POST', path: '/v1/users/create', body: { Email: 'canary-member@audit.example' }, ...asKey(K) },
      201,
      mine,
    );
    const member = json<{ Id: number }>(invitedMember).Id;
    inviteCode(invitedMember);
    for (const method of ['PUT', 'PATCH'] as const)
      await run({ method, path: '/v1/users/update', query: `id=${member}`, body: { Name: `${BODY} ${method}` }, ...asKey(K) }, 200, mine);
    inviteCode(await run({ method: 'POST', path: '/v1/users/reset', query: `id=${member}`, ...asKey(K) }, 200, mine));
    await run({ path: '/v1/users/index', ...asKey(K) }, 200);
    await run({ path: '/v1/users/view', query: `id=${member}`, ...asKey(K) }, 200);
    await run({ method: 'DELETE', path: '/v1/users/delete', query: `id=${member}`, ...asKey(K) }, 204, mine);
    await run({ path: '/v1/audit/index', ...asKey(K) }, 200);

    // ---- the console: invite, password, two-factor with real codes, recovery codes, passkeys, sign-out
    const session = (what: string) => ({ account: P, actor: ownerActor, operation: what });
    const ownerCookie = cookieOf(
      await run({ method: 'POST', path: '/console/api/invite', body: { Code: ownerCode, Password: PW1 } }, 204, session('session.create')),
    );
    const ownerCsrf = await csrfOf(ownerCookie);
    const asOwner = { session: { cookie: ownerCookie, csrf: ownerCsrf } };
    await run(
      { method: 'PUT', path: '/console/api/password', body: { CurrentPassword: PW1, Password: PW2 }, ...asOwner },
      204,
      session('password.update'),
    );
    await run(
      { method: 'PUT', path: '/console/api/password', body: { CurrentPassword: PW_WRONG, Password: PW3 }, ...asOwner },
      422,
      session('password.update'),
    );
    const signIn = (body: Record<string, unknown>, status: number, audit: Expected | null, ip?: string) =>
      run({ method: 'POST', path: '/console/api/session', body, ...(ip ? { ip } : {}) }, status, audit);
    await signIn({ Email: ownerEmail, Password: PW1 }, 422, session('session.create'), '192.0.2.11');
    const begun = json<{ Secret: string; Uri: string }>(
      await run({ method: 'POST', path: '/console/api/2fa', ...asOwner }, 200, session('2fa.create')),
    );
    secrets.push(canary('the TOTP secret', begun.Secret), canary('the TOTP URI', begun.Uri));
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(begun.Secret), digits: 6, period: 30, algorithm: 'SHA1' });
    const code = () => {
      const c = totp.generate({ timestamp: clock.nowMs() });
      secrets.push(codeCanary('a TOTP code', c));
      return c;
    };
    const recovery = json<{ RecoveryCodes: string[] }>(
      await run({ method: 'POST', path: '/console/api/2fa/confirm', body: { Code: code() }, ...asOwner }, 200, session('2fa.confirm')),
    ).RecoveryCodes;
    assert.equal(recovery.length, 10);
    for (const c of recovery)
      secrets.push(canary('a recovery code', c), canary('a recovery code', c.replace('-', '')), canary('a recovery code', c.toUpperCase()));
    // The right password without the code the person now needs: `Code cannot be blank.`, which is no
    // failed sign-in (API.md §15.3: a missing code is not a failure), so no entry.
    await signIn({ Email: ownerEmail, Password: PW2 }, 422, null);
    clock.advance(30_000);
    const second = code();
    const byCode = cookieOf(await signIn({ Email: ownerEmail, Password: PW2, Code: second }, 204, session('session.create')));
    await signIn({ Email: ownerEmail, Password: PW2, Code: second }, 422, session('session.create'), '192.0.2.12');
    const byRecovery = cookieOf(await signIn({ Email: ownerEmail, Password: PW2, Code: recovery[0] }, 204, session('session.create')));
    const asCode = { session: { cookie: byCode, csrf: await csrfOf(byCode) } };
    await run({ method: 'POST', path: '/console/api/passkeys/options', ...asCode }, 200, session('passkeys.options'));
    await run(
      {
        method: 'POST',
        path: '/console/api/passkeys',
        body: { Name: 'k', Response: { id: 'x', rawId: 'x', type: 'public-key' } },
        ...asCode,
      },
      422,
      session('passkeys.create'),
    );
    await run({ path: '/console/api/passkeys', ...asCode }, 200);
    await run({ method: 'DELETE', path: '/console/api/passkeys', query: 'id=999', ...asCode }, 404, {
      ...session('passkeys.delete'),
      objectId: '999',
    });
    const challenge = json<{ ChallengeId: string }>(await run({ method: 'POST', path: '/console/api/passkeys/sign-in' }, 200)).ChallengeId;
    await signIn(
      { ChallengeId: challenge, Passkey: { id: 'unknown', rawId: 'unknown', type: 'public-key', response: {} } },
      422,
      null,
      '192.0.2.13',
    );
    clock.advance(30_000);
    await run({ method: 'DELETE', path: '/console/api/2fa', body: { Code: code() }, ...asOwner }, 204, session('2fa.delete'));
    // /v1 with the person's session: a write with X-CSRF-Token, and one without it (403, in the log too).
    await run({ method: 'POST', path: '/v1/sms/send', body: { MobilePhone: to, Message: MESSAGE }, ...asCode }, 201, v1(P, ownerActor));
    await run(
      { method: 'POST', path: '/v1/sms/send', body: { MobilePhone: to, Message: MESSAGE }, session: { cookie: byCode } },
      403,
      v1(P, ownerActor),
    );
    await run({ method: 'DELETE', path: '/console/api/session', session: { cookie: byRecovery } }, 204, session('session.delete'));
    // A key's session: signed in with the rolled secret; an unknown key and an unknown email leave no entry.
    const keyActor2 = `key:${key2}:audit key`;
    const keyCookie = cookieOf(await signIn({ Key: rolled }, 204, { account: P, actor: keyActor2, operation: 'session.create' }));
    await signIn({ Key: `${rolled}-unknown` }, 422, null, '192.0.2.14');
    await signIn({ Email: 'stranger@audit.example', Password: PW1 }, 422, null, '192.0.2.15');
    await run(
      {
        method: 'POST',
        path: '/v1/groups/create',
        body: { fname: 'Key session group', fnote: BODY },
        session: { cookie: keyCookie, csrf: await csrfOf(keyCookie) },
      },
      201,
      v1(P, keyActor2),
    );
    await run({ method: 'DELETE', path: '/v1/keys/delete', query: `id=${key2}`, ...asKey(K) }, 204, mine);
    // The lockout: five wrong passwords for the email (each from an address of its own), then the
    // right one is refused with 429, which is in the log too (API.md §15.5), password and all.
    for (let i = 0; i < 5; i++)
      await signIn({ Email: ownerEmail, Password: PW_WRONG }, 422, session('session.create'), `192.0.2.${21 + i}`);
    await signIn({ Email: ownerEmail, Password: PW2 }, 429, session('session.create'), '192.0.2.30');

    // ---- sub-accounts: the parent's writes in its log; the child's own in the child's
    const child = json<{ Id: number }>(
      await run({ method: 'POST', path: '/v1/subaccounts/create', body: { Name: 'Audit child', Credits: 10 }, ...asKey(K) }, 201, mine),
    ).Id;
    await run({ path: '/v1/subaccounts/index', ...asKey(K) }, 200);
    await run({ path: '/v1/subaccounts/view', query: `id=${child}`, ...asKey(K) }, 200);
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        { method, path: '/v1/subaccounts/update', query: `id=${child}`, body: { Name: `Audit child ${method}` }, ...asKey(K) },
        200,
        mine,
      );
    await run({ method: 'POST', path: '/v1/subaccounts/credits', query: `id=${child}`, body: { Amount: 5 }, ...asKey(K) }, 200, mine);
    const childKey = await run(
      { method: 'POST', path: '/v1/subaccounts/keys', query: `id=${child}`, body: { Name: 'child key' }, ...asKey(K) },
      201,
      mine,
    );
    const childSecret = secretOf(childKey, 'a key secret (subaccounts/keys)');
    const childActor = `key:${json<{ Id: number }>(childKey).Id}:child key`;
    const childCode = inviteCode(
      await run(
        { method: 'POST', path: '/v1/subaccounts/users', query: `id=${child}`, body: { Email: 'canary-child@audit.example' }, ...asKey(K) },
        201,
        mine,
      ),
    );
    await run({ method: 'POST', path: '/v1/subaccounts/numbers', query: `id=${child}`, body: { Number: '55155' }, ...asKey(K) }, 200, mine);
    await run({ method: 'DELETE', path: '/v1/subaccounts/numbers', query: `id=${child}`, body: { Number: '55155' }, ...asKey(K) }, 204, {
      ...mine,
      operation: 'subaccounts.numbers-remove',
      objectId: String(child),
    });
    await run({ path: '/v1/subaccounts/usage', ...asKey(K) }, 200);
    await run(
      { method: 'POST', path: '/v1/groups/create', body: { fname: `Child ${BODY}` }, ...asKey(childSecret) },
      201,
      v1(child, childActor),
    );
    await run({ method: 'POST', path: '/v1/subaccounts/create', body: { Name: BODY }, ...asKey(childSecret) }, 403, v1(child, childActor));
    const childUser = (await ctx.store.db.selectFrom('users').select('id').where('account_id', '=', child).executeTakeFirstOrThrow()).id;
    cookieOf(
      await run({ method: 'POST', path: '/console/api/invite', body: { Code: childCode, Password: PW3 } }, 204, {
        account: child,
        actor: `user:${childUser}:canary-child@audit.example`,
        operation: 'session.create',
      }),
    );

    const pages = async (path: string, token: string, wire: 'json' | 'xml', extra = '') => {
      const out: string[] = [];
      for (let page = 1; ; page++) {
        const res = await ctx.app.inject({
          url: `${path}?access_token=${encodeURIComponent(token)}&per-page=100&page=${page}${extra}`,
          headers: { accept: wire === 'xml' ? 'application/xml' : 'application/json' },
        });
        assert.equal(res.statusCode, 200, res.body);
        out.push(res.body);
        if (page >= Number(res.headers['x-pagination-page-count'])) return out.join('\n');
      }
    };
    const childAudit = await pages('/v1/audit/index', childSecret, 'json');

    // ---- the operator: its writes in the logs of the accounts they touch; its sign-in in none
    const asOp = { token: op.secret };
    await run({ path: '/admin/v1/accounts/index', ...asOp }, 200);
    await run({ path: '/admin/v1/accounts/view', query: `id=${P}`, ...asOp }, 200);
    const made = json<{ Id: number }>(
      await run({ method: 'POST', path: '/admin/v1/accounts/create', body: { Name: 'Audit operator account' }, ...asOp }, 201),
    );
    const A2 = made.Id;
    expected.set(`audit-${serial}`, { account: A2, actor: operatorActor, operation: 'admin.accounts.create', objectId: String(A2) });
    const onA2 = { account: A2, actor: operatorActor };
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        { method, path: '/admin/v1/accounts/update', query: `id=${A2}`, body: { Name: `Audit operator account ${method}` }, ...asOp },
        200,
        onA2,
      );
    await run(
      { method: 'POST', path: '/admin/v1/accounts/credits', query: `id=${A2}`, body: { Amount: 100, Note: BODY }, ...asOp },
      200,
      onA2,
    );
    secretOf(
      await run({ method: 'POST', path: '/admin/v1/accounts/keys', query: `id=${A2}`, body: { Name: 'ops key' }, ...asOp }, 201, onA2),
      'a key secret (accounts/keys)',
    );
    inviteCode(
      await run(
        { method: 'POST', path: '/admin/v1/accounts/users', query: `id=${A2}`, body: { Email: 'canary-a2@audit.example' }, ...asOp },
        201,
        onA2,
      ),
    );
    await run({ path: '/admin/v1/numbers/index', ...asOp }, 200);
    await run({ method: 'POST', path: '/admin/v1/numbers/create', body: { Number: '15550107009', AccountId: A2 }, ...asOp }, 201, {
      ...onA2,
      operation: 'admin.numbers.create',
      objectId: '15550107009',
    });
    for (const method of ['PUT', 'PATCH'] as const)
      await run(
        { method, path: '/admin/v1/numbers/update', query: 'number=15550107009', body: { Status_Id: method === 'PUT' ? 1 : 0 }, ...asOp },
        200,
        onA2,
      );
    await run({ method: 'DELETE', path: '/admin/v1/numbers/delete', query: 'number=15550107009', ...asOp }, 204, onA2);
    for (const path of ['/admin/v1/usage/index', '/admin/v1/usage', '/admin/v1/carriers/index', '/admin/v1/audit/index'])
      await run({ path, ...asOp }, 200);
    const opCookie = cookieOf(await signIn({ Key: op.secret }, 204, null));
    await run(
      {
        method: 'POST',
        path: '/admin/v1/accounts/credits',
        query: `id=${A2}`,
        body: { Amount: 1, Note: BODY },
        session: { cookie: opCookie, csrf: await csrfOf(opCookie) },
      },
      200,
      onA2,
    );
    await run({ method: 'DELETE', path: '/admin/v1/accounts/delete', query: `id=${A2}`, ...asOp }, 204, onA2);

    // ---- the deletes, last
    await run({ method: 'DELETE', path: '/v1/keyword/delete', query: `id=${keyword}`, ...asKey(K) }, 204, mine);
    await run({ method: 'DELETE', path: '/v1/mms-templates/delete', query: `id=${template}`, ...asKey(K) }, 204, mine);
    await run({ method: 'DELETE', path: '/v1/media/delete', query: `id=${media}`, ...asKey(K) }, 204, mine);
    await run({ method: 'DELETE', path: '/v1/groups/delete', query: `id=${group}`, ...asKey(K) }, 204, mine);
    await run({ method: 'DELETE', path: '/v1/custom-contact-fields/delete', query: `id=${field}`, ...asKey(K) }, 204, mine);
    await run({ method: 'DELETE', path: '/v1/contacts/delete', query: `id=${contact}`, ...asKey(K) }, 204, mine);
    await run({ method: 'DELETE', path: '/v1/webhooks/delete', query: `id=${webhook}`, ...asKey(K) }, 204, mine);
    await run({ method: 'DELETE', path: '/v1/subaccounts/delete', query: `id=${child}`, ...asKey(K) }, 204, mine);

    // Every operation ran: every /v1 and /admin/v1 operation by each of its methods, and every route
    // of the console's session API (docs/API.md §15.4).
    const missing = [...byRoute.keys(), ...CONSOLE_ROUTES].filter((k) => !ran.has(k));
    assert.deepEqual(missing, [], 'every operation and method was run');

    // ---- the audit log holds exactly the prescribed entries (refusals' entries come just after their answers)
    const mineRows = async () =>
      (await ctx.store.db.selectFrom('audit_log').selectAll().where('request_id', 'like', 'audit-%').execute()).map((row) => ({
        requestId: row.request_id,
        account: Number(row.account_id),
        actor: row.actor,
        operation: row.operation,
        objectId: row.object_id,
        status: Number(row.status),
      }));
    const deadline = Date.now() + 20_000;
    while ((await mineRows()).length < expected.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const rows = await mineRows();
    const statuses = new Map<string, number>();
    for (const line of lines) {
      const entry = JSON.parse(line) as { msg?: string; reqId?: string; statusCode?: number };
      if (entry.msg === 'request' && entry.reqId?.startsWith('audit-')) statuses.set(entry.reqId, entry.statusCode!);
    }
    const got = new Map(rows.map((row) => [row.requestId, row]));
    const problems: string[] = [];
    for (const [requestId, e] of expected) {
      const row = got.get(requestId);
      if (!row) {
        problems.push(`${requestId} (${described.get(requestId) ?? ''}, ${e.operation}) has no entry`);
        continue;
      }
      const want = { account: e.account, actor: e.actor, operation: e.operation, status: statuses.get(requestId) };
      const have = { account: row.account, actor: row.actor, operation: row.operation, status: row.status };
      if (JSON.stringify(have) !== JSON.stringify(want)) problems.push(`${requestId}: ${JSON.stringify(have)} ≠ ${JSON.stringify(want)}`);
      if (e.objectId !== undefined && row.objectId !== e.objectId)
        problems.push(`${requestId} (${e.operation}): ObjectId ${row.objectId} ≠ ${e.objectId}`);
    }
    for (const row of rows)
      if (!expected.has(row.requestId)) problems.push(`${row.requestId} has an entry it should not: ${JSON.stringify(row)}`);
    assert.deepEqual(problems, [], 'the audit log holds exactly the entries docs/API.md §15.5 and §16.4 prescribe');
    assert.ok(expected.size >= 100, `${expected.size} audit entries expected`);

    // ---- the texts to search: the request log, the audit table, and the audit log through the API
    for (let i = 1; i <= serial; i++) assert.ok(statuses.has(`audit-${i}`), `the request log has the line of audit-${i}`);
    const table = await ctx.store.db.selectFrom('audit_log').selectAll().orderBy('id').execute();
    const texts: Record<string, string> = {
      'the audit table (JSON)': JSON.stringify(table),
      'the audit table (raw values)': table.map((row) => Object.values(row).join('\u0000')).join('\n'),
      '/v1/audit/index of the parent (JSON)': await pages('/v1/audit/index', K, 'json'),
      '/v1/audit/index of the parent (XML)': await pages('/v1/audit/index', K, 'xml'),
      '/v1/audit/index of the child (JSON, before it closed)': childAudit,
      '/admin/v1/audit/index (JSON)': await pages('/admin/v1/audit/index', op.secret, 'json'),
      '/admin/v1/audit/index (XML)': await pages('/admin/v1/audit/index', op.secret, 'xml'),
    };
    assert.ok(
      texts['/admin/v1/audit/index (JSON)']!.includes('"admin.accounts.create"') &&
        texts['/v1/audit/index of the parent (XML)']!.includes('<Operation>sms.send</Operation>'),
    );
    texts['the request log'] = lines.join('');
    assert.ok(lines.length > serial, `${lines.length} log lines for ${serial} requests`);

    // The canaries did reach the service where they belong (a message's text, a hash of each password).
    const stored = JSON.stringify([
      await ctx.store.db.selectFrom('messages').select('message').where('account_id', '=', P).execute(),
      await ctx.store.db.selectFrom('keyword_reservations').select('autoreply_message').where('account_id', '=', P).execute(),
    ]);
    assert.ok(stored.includes(MSG), 'the message texts were stored');
    assert.ok(
      (
        await ctx.store.db.selectFrom('users').select('password_hash').where('id', '=', owner).executeTakeFirstOrThrow()
      ).password_hash?.startsWith('$argon2id$'),
    );

    const found = leaks(texts, secrets);
    assert.deepEqual(found, [], 'no canary in any form in the request log or the audit log');
    t.diagnostic(
      `${serial} requests, ${expected.size} audit entries checked, ${secrets.length} canaries × ${Object.keys(texts).length} texts (${lines.length} log lines)`,
    );
  },
);
