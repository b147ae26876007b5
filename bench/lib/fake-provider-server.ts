/**
 * A lean fake of an HTTP carrier's provider for bench/carriers.ts, run in its own process so that
 * its CPU is counted apart from msgsvc's (bench/lib/fake-provider.ts starts it):
 *
 *   node --import tsx bench/lib/fake-provider-server.ts --kind twilio --port P --user SID --password TOKEN
 *   node --import tsx bench/lib/fake-provider-server.ts --kind android --port P --user USER --password PASSWORD
 *
 * It answers as the real API does (API.md §14.1), and no more, so that it stays cheaper than the
 * msgsvc worker it serves:
 * - `twilio`: `POST /2010-04-01/Accounts/{SID}/Messages.json` with HTTP Basic `SID:TOKEN` → 201 and
 *   the JSON of Twilio's Message resource (a fresh `sid` `SM` + 32 hex, `status` `queued`, …); no
 *   `To` → 400 `{"code":21604}`; wrong credentials → 401 `{"code":20003}`. `GET
 *   /2010-04-01/Accounts/{SID}.json` (the carrier's readiness probe) → 200.
 * - `android` ("SMS Gateway for Android" v1.58+, Local Server mode): `POST /message` `{ id,
 *   message, phoneNumbers }` → 202 with the message's state, 409 for an id it already holds;
 *   `GET /message/{id}`; `GET|POST /webhooks`, `DELETE /webhooks/{id}` (a webhook URL must be
 *   `https://` or `http://127.0.0.1`, as the app requires); wrong credentials → 401.
 * No callback or event is ever sent back: the bench measures messages Queued → accepted.
 *
 * `GET /__bench/stats` (no credentials) answers its counters as JSON (`FakeProviderStats` of
 * fake-provider.ts): submits, duplicates (a recipient, or an android id, seen before), refused
 * requests, probes, `MediaUrl`s received, one sample `MediaUrl`, webhooks registered.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({
  options: {
    kind: { type: 'string' },
    port: { type: 'string' },
    user: { type: 'string' },
    password: { type: 'string' },
  },
});
if (o.kind !== 'twilio' && o.kind !== 'android') throw new Error('--kind twilio|android');
const kind = o.kind;
const user = o.user ?? '';
const expectedAuth = `Basic ${Buffer.from(`${user}:${o.password ?? ''}`).toString('base64')}`;

const stats = {
  kind,
  submits: 0,
  accepted: 0,
  duplicates: 0,
  refused: 0,
  probes: 0,
  mediaUrls: 0,
  sampleMediaUrl: null as string | null,
  webhooks: 0,
};

// Each recipient (Twilio) or id (android) seen; a bench run sends each exactly once.
const seen = new Set<string>();
const held = new Map<string, string>();
const webhooks = new Map<string, { id: string; url: string; event: string }>();

// A sid as Twilio writes them (`SM` + 32 hex): a random half per process and a counter, so that
// making one costs no random bytes per request.
const sidPrefix = `SM${randomBytes(8).toString('hex')}`;
let sidCounter = 0;
const nextSid = () => sidPrefix + (++sidCounter).toString(16).padStart(16, '0');

// Twilio's dates are RFC 2822 (`Tue, 01 Apr 2025 10:00:00 +0000`): one string per second.
let dateSecond = 0;
let dateText = '';
const rfc2822 = () => {
  const s = Math.floor(Date.now() / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateText = new Date(s * 1000).toUTCString().replace('GMT', '+0000');
  }
  return dateText;
};

const json = (res: ServerResponse, status: number, value: unknown) => {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
};

const formValue = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));

function twilio(req: IncomingMessage, res: ServerResponse, path: string, body: string): void {
  const accountPath = `/2010-04-01/Accounts/${encodeURIComponent(user)}`;
  if (req.headers.authorization !== expectedAuth) {
    stats.refused++;
    return json(res, 401, { code: 20003, message: 'Authenticate', more_info: 'https://www.twilio.com/docs/errors/20003', status: 401 });
  }
  if (req.method === 'GET' && path === `${accountPath}.json`) {
    stats.probes++;
    return json(res, 200, { sid: user, friendly_name: 'bench', status: 'active', type: 'Full' });
  }
  if (req.method !== 'POST' || path !== `${accountPath}/Messages.json`) {
    return json(res, 404, { code: 20404, message: 'The requested resource was not found', status: 404 });
  }
  stats.submits++;
  // The form's fields, split by hand: only To, From, Body and the MediaUrls are read.
  let to = '';
  let from = '';
  let text = '';
  let media = 0;
  for (const pair of body.split('&')) {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    if (name === 'To') to = formValue(pair.slice(eq + 1));
    else if (name === 'From') from = formValue(pair.slice(eq + 1));
    else if (name === 'Body') text = formValue(pair.slice(eq + 1));
    else if (name === 'MediaUrl') {
      media++;
      stats.sampleMediaUrl ??= formValue(pair.slice(eq + 1));
    }
  }
  if (to === '') {
    stats.refused++;
    return json(res, 400, { code: 21604, message: "A 'To' phone number is required.", status: 400 });
  }
  if (seen.has(to)) stats.duplicates++;
  else seen.add(to);
  stats.mediaUrls += media;
  stats.accepted++;
  const sid = nextSid();
  const date = rfc2822();
  // Twilio's Message resource as its API answers a create (the fields msgsvc ignores included:
  // the reply's size is part of what the carrier reads).
  json(res, 201, {
    account_sid: user,
    api_version: '2010-04-01',
    body: text,
    date_created: date,
    date_sent: null,
    date_updated: date,
    direction: 'outbound-api',
    error_code: null,
    error_message: null,
    from,
    messaging_service_sid: null,
    num_media: String(media),
    num_segments: '1',
    price: null,
    price_unit: 'USD',
    sid,
    status: 'queued',
    subresource_uris: { media: `${accountPath}/Messages/${sid}/Media.json` },
    to,
    uri: `${accountPath}/Messages/${sid}.json`,
  });
}

const DEVICE_ID = 'ffffffffceb0b1db0000018e937c815b';
const phoneState = (id: string, to: string) => ({
  id,
  deviceId: DEVICE_ID,
  state: 'Pending',
  isHashed: false,
  isEncrypted: false,
  recipients: [{ phoneNumber: to, state: 'Pending', error: null }],
  states: { Pending: new Date().toISOString() },
});

function android(req: IncomingMessage, res: ServerResponse, path: string, body: string): void {
  if (path === '/health') return json(res, 200, { status: 'pass', version: '1.68.0', releaseId: 1, checks: {} });
  if (req.headers.authorization !== expectedAuth) {
    stats.refused++;
    res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="Access to SMS Gateway", charset="UTF-8"' }).end();
    return;
  }
  let parsed: Record<string, unknown> = {};
  if (body !== '') {
    try {
      parsed = JSON.parse(body) as Record<string, unknown>;
    } catch {
      stats.refused++;
      return json(res, 400, { message: 'Failed to convert request body' });
    }
  }
  if (req.method === 'POST' && path === '/message') {
    stats.submits++;
    const text = parsed['message'];
    const numbers = parsed['phoneNumbers'];
    const id = parsed['id'];
    if (typeof text !== 'string' || text === '' || !Array.isArray(numbers) || numbers.length === 0 || typeof id !== 'string' || id === '') {
      stats.refused++;
      return json(res, 400, { message: 'Invalid message' });
    }
    if (seen.has(id)) {
      stats.duplicates++;
      return json(res, 409, { message: 'Message with the same ID already exists' });
    }
    seen.add(id);
    const to = String(numbers[0]);
    held.set(id, to);
    stats.accepted++;
    return json(res, 202, phoneState(id, to));
  }
  const one = /^\/message\/([^/]+)$/.exec(path);
  if (req.method === 'GET' && one) {
    const id = decodeURIComponent(one[1]!);
    const to = held.get(id);
    return to === undefined ? json(res, 404, { message: 'not found' }) : json(res, 200, phoneState(id, to));
  }
  if (path === '/webhooks' && req.method === 'GET')
    return json(
      res,
      200,
      [...webhooks.values()].map((w) => ({ ...w, deviceId: null, source: 'Local' })),
    );
  if (path === '/webhooks' && req.method === 'POST') {
    const url = typeof parsed['url'] === 'string' ? parsed['url'] : '';
    if (!url.startsWith('https://') && !url.startsWith('http://127.0.0.1'))
      return json(res, 400, { message: 'url must start with https://' });
    const id = typeof parsed['id'] === 'string' && parsed['id'] !== '' ? parsed['id'] : randomBytes(10).toString('base64url');
    const hook = { id, url, event: String(parsed['event']) };
    webhooks.set(id, hook);
    stats.webhooks = webhooks.size;
    return json(res, 201, { ...hook, deviceId: null, source: 'Local' });
  }
  const del = /^\/webhooks\/([^/]+)$/.exec(path);
  if (req.method === 'DELETE' && del) {
    webhooks.delete(decodeURIComponent(del[1]!));
    stats.webhooks = webhooks.size;
    res.writeHead(204).end();
    return;
  }
  json(res, 404, { message: 'not found' });
}

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path === '/__bench/stats') return json(res, 200, stats);
    if (kind === 'twilio') twilio(req, res, path, body);
    else android(req, res, path, body);
  });
});
// msgsvc keeps its connections open between rounds of the dispatcher.
server.keepAliveTimeout = 60_000;
server.listen(Number(o.port ?? 0), '127.0.0.1');
