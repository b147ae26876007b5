import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { once } from 'node:events';

/**
 * A fake Android phone running "SMS Gateway for Android" in Local Server mode: a real HTTP server
 * on 127.0.0.1 that answers as the app's local server does (app v1.58+, read from its source:
 * routes at the root, HTTP Basic auth, `POST /message` → 202 with the message's state, 409 for an
 * id it already holds, `GET /message/{id}`, `GET|POST /webhooks`, `DELETE /webhooks/{id}`, the
 * app's checks on a webhook URL), and fires events as the app does: `{ id, webhookId, event,
 * deviceId, payload }`, signed with `X-Timestamp` and `X-Signature` = hex HMAC-SHA256(key, body +
 * timestamp). Signing is written here independently of src/carriers/android-events.ts.
 *
 * Faults: `faults.send` / `faults.webhooks` = an HTTP status to answer, `'hang'` (never answer)
 * or `'reset'` (drop the connection); `stop()` closes the port, `start()` opens it again.
 */

export type Fault = number | 'hang' | 'reset' | undefined;

export interface PhoneMessage {
  id: string;
  text: string;
  phoneNumbers: string[];
  withDeliveryReport: boolean;
  /** The query's skipPhoneValidation, as sent. */
  skipPhoneValidation: string | null;
}

export interface PhoneWebhook {
  id: string;
  url: string;
  event: string;
}

export interface PhoneRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: string;
}

const EVENTS = new Set([
  'sms:received',
  'sms:sent',
  'sms:delivered',
  'sms:failed',
  'system:ping',
  'sms:data-received',
  'mms:received',
  'mms:downloaded',
  'app:started',
  'sms:cancelled',
]);

export interface FakePhoneOptions {
  username?: string;
  password?: string;
  signingKey?: string;
  /** Port to listen on (default: any free one). */
  port?: number;
  /** Do not listen yet (call start()). */
  down?: boolean;
}

export class FakePhone {
  readonly username: string;
  readonly password: string;
  signingKey: string;
  readonly deviceId = 'ffffffffceb0b1db0000018e937c815b';
  port: number;
  readonly messages = new Map<string, PhoneMessage>();
  readonly webhooks = new Map<string, PhoneWebhook>();
  readonly requests: PhoneRequest[] = [];
  readonly faults: { send: Fault; webhooks: Fault } = { send: undefined, webhooks: undefined };
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();

  private constructor(o: FakePhoneOptions) {
    this.username = o.username ?? 'sms';
    this.password = o.password ?? 'Ph0ne-Pa55';
    this.signingKey = o.signingKey ?? 'k3y-Of-The-Ph0ne';
    this.port = o.port ?? 0;
  }

  static async create(o: FakePhoneOptions = {}): Promise<FakePhone> {
    const phone = new FakePhone(o);
    if (!o.down) await phone.start();
    return phone;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens (again) on `port` (the same one after stop()). */
  async start(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Closes the port and every connection (the phone is off). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    this.hanging.clear();
    server.close();
    await once(server, 'close');
  }

  /** Requests to a path (e.g. `/webhooks`), by method. */
  count(method: string, path: string): number {
    return this.requests.filter((r) => r.method === method && r.path === path).length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://phone');
    this.requests.push({ method: req.method ?? '', path: url.pathname, authorization: req.headers.authorization, body });
    const json = (status: number, value?: unknown) => {
      const text = value === undefined ? '' : JSON.stringify(value);
      res.writeHead(status, value === undefined ? {} : { 'Content-Type': 'application/json' }).end(text);
    };
    if (url.pathname === '/health') return json(200, { status: 'pass', version: '1.68.0', releaseId: 1, checks: {} });
    const expected = `Basic ${Buffer.from(`${this.username}:${this.password}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="Access to SMS Gateway", charset="UTF-8"' }).end();
      return;
    }
    const route = url.pathname.replace(/^\/(message|messages)(?=\/|$)/, '/message').replace(/^\/(webhook|webhooks)(?=\/|$)/, '/webhooks');
    const fault = route.startsWith('/message') ? this.faults.send : route.startsWith('/webhooks') ? this.faults.webhooks : undefined;
    if (fault === 'hang') {
      this.hanging.add(res);
      return;
    }
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (typeof fault === 'number') return json(fault, { message: 'fault injected' });
    let parsed: Record<string, unknown> = {};
    if (body !== '') {
      try {
        parsed = JSON.parse(body) as Record<string, unknown>;
      } catch {
        return json(400, { message: 'Failed to convert request body' });
      }
    }
    if (req.method === 'POST' && route === '/message') return this.postMessage(parsed, url, json);
    const one = /^\/message\/([^/]+)$/.exec(route);
    if (req.method === 'GET' && one) {
      const m = this.messages.get(decodeURIComponent(one[1]!));
      return m ? json(200, this.state(m)) : json(404);
    }
    if (req.method === 'GET' && route === '/webhooks') {
      return json(
        200,
        [...this.webhooks.values()].map((w) => ({ id: w.id, deviceId: null, url: w.url, event: w.event, source: 'Local' })),
      );
    }
    if (req.method === 'POST' && route === '/webhooks') {
      const target = typeof parsed['url'] === 'string' ? parsed['url'] : '';
      let host = '';
      try {
        host = new URL(target).hostname;
      } catch {
        /* checked below */
      }
      if (!target.startsWith('https://') && !(target.startsWith('http://') && host === '127.0.0.1')) {
        return json(400, { message: 'url must start with https:// or http://127.0.0.1' });
      }
      if (typeof parsed['event'] !== 'string' || !EVENTS.has(parsed['event'])) return json(400, { message: 'Unsupported event' });
      const id = typeof parsed['id'] === 'string' && parsed['id'] !== '' ? parsed['id'] : randomBytes(10).toString('base64url');
      const hook = { id, url: target, event: parsed['event'] };
      this.webhooks.set(id, hook);
      return json(201, { ...hook, deviceId: null, source: 'Local' });
    }
    const del = /^\/webhooks\/([^/]+)$/.exec(route);
    if (req.method === 'DELETE' && del) {
      this.webhooks.delete(decodeURIComponent(del[1]!));
      return json(204);
    }
    return json(404, { message: 'not found' });
  }

  private postMessage(p: Record<string, unknown>, url: URL, json: (status: number, value?: unknown) => void): void {
    const kinds = [p['message'], p['textMessage'], p['dataMessage']].filter((v) => v !== undefined && v !== null);
    if (kinds.length !== 1) return json(400, { message: 'Must specify exactly one of: textMessage, dataMessage, or message' });
    const text = typeof p['message'] === 'string' ? p['message'] : (p['textMessage'] as { text?: string } | undefined)?.text;
    if (typeof text !== 'string' || text === '') return json(400, { message: 'Text message is empty' });
    const phoneNumbers = p['phoneNumbers'];
    if (!Array.isArray(phoneNumbers) || phoneNumbers.length === 0) return json(400, { message: 'Empty phone numbers list' });
    const id = typeof p['id'] === 'string' && p['id'] !== '' ? p['id'] : randomBytes(10).toString('base64url');
    if (this.messages.has(id)) return json(409, { message: 'Message with the same ID already exists' });
    const m: PhoneMessage = {
      id,
      text,
      phoneNumbers: phoneNumbers.map(String),
      withDeliveryReport: p['withDeliveryReport'] !== false,
      skipPhoneValidation: url.searchParams.get('skipPhoneValidation'),
    };
    this.messages.set(id, m);
    json(202, this.state(m));
  }

  private state(m: PhoneMessage) {
    return {
      id: m.id,
      deviceId: this.deviceId,
      state: 'Pending',
      isHashed: false,
      isEncrypted: false,
      scheduleAt: null,
      textMessage: { text: m.text },
      dataMessage: null,
      hashedMessage: null,
      recipients: m.phoneNumbers.map((phoneNumber) => ({ phoneNumber, state: 'Pending', error: null })),
      states: { Pending: new Date().toISOString() },
    };
  }

  /** Puts a message on the phone as if another client had sent it (to test id clashes). */
  hold(id: string, to: string, text: string): void {
    this.messages.set(id, { id, text, phoneNumbers: [to], withDeliveryReport: true, skipPhoneValidation: null });
  }

  /**
   * An event as the app builds it and its signed request: the body is the exact JSON text,
   * `X-Timestamp` the Unix seconds (default now), `X-Signature` the hex HMAC-SHA256 of body +
   * timestamp keyed with the phone's signing key (or `key`).
   */
  signedEvent(
    event: string,
    payload: Record<string, unknown>,
    o: { id?: string; webhookId?: string; timestamp?: number; key?: string } = {},
  ) {
    const body = JSON.stringify({
      id: o.id ?? randomBytes(10).toString('base64url'),
      webhookId: o.webhookId ?? [...this.webhooks.values()].find((w) => w.event === event)?.id ?? 'none',
      event,
      deviceId: this.deviceId,
      payload,
    });
    const timestamp = String(o.timestamp ?? Math.floor(Date.now() / 1000));
    const signature = createHmac('sha256', o.key ?? this.signingKey)
      .update(body + timestamp)
      .digest('hex');
    return { body, headers: { 'Content-Type': 'application/json; charset=UTF-8', 'X-Timestamp': timestamp, 'X-Signature': signature } };
  }

  /**
   * Fires an event at the URL registered for it (as the app's webhook worker does): a POST of
   * the signed JSON. `tamper` changes the body after signing.
   * @returns the receiver's status and body text.
   * @throws Error when no webhook is registered for the event.
   */
  async fire(
    event: string,
    payload: Record<string, unknown>,
    o: { id?: string; timestamp?: number; key?: string; tamper?: (body: string) => string } = {},
  ): Promise<{ status: number; body: string }> {
    const hook = [...this.webhooks.values()].find((w) => w.event === event);
    if (!hook) throw new Error(`no webhook registered for ${event}`);
    const signed = this.signedEvent(event, payload, { ...o, webhookId: hook.id });
    const res = await fetch(hook.url, { method: 'POST', headers: signed.headers, body: o.tamper ? o.tamper(signed.body) : signed.body });
    return { status: res.status, body: await res.text() };
  }
}
