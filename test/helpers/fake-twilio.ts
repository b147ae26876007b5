import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import twilio from 'twilio';

/**
 * A small Twilio-compatible provider of our own, on loopback, for what Prism cannot play:
 * throttling (429 + Retry-After), 5xx, a provider that never answers, permanent errors with
 * Twilio codes, replies that are not JSON or are cut off, and an outage (connections refused).
 * It records every submit it receives (for routing and failover tests), answers the readiness
 * probe (`GET /2010-04-01/Accounts/{SID}.json`), and sends status and inbound callbacks signed
 * with the OFFICIAL `twilio` package (never with msgsvc's own code).
 *
 * By default a submit with the right Basic credentials and a `To` is answered 201 with a fresh
 * `sid` (`SM` + 32 hex), as Twilio does; wrong credentials 401 `{"code":20003}`; no `To` 400
 * `{"code":21604}`.
 */
export interface FakeTwilioSubmit {
  /** 1, 2, … in order of arrival. */
  n: number;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  /** The body as received. */
  raw: string;
  /** The fields, a repeated name as an array (in order). */
  form: Record<string, string | string[]>;
  /** The sid answered, when the answer was the default 201. */
  sid?: string;
}

export type FakeAnswer =
  /** The default: Twilio's 201 (or its 401/400 for bad credentials or a missing To). */
  | 'default'
  /** Never answers (the socket stays open until close()). */
  | 'hang'
  /** Destroys the connection without an answer. */
  | 'destroy'
  /** Sends a 201's headers and half a body, then destroys the connection. */
  | 'cut'
  | { status: number; json?: unknown; body?: string; headers?: Record<string, string> };

export interface FakeTwilio {
  readonly url: string;
  readonly port: number;
  readonly accountSid: string;
  readonly authToken: string;
  /** Submits received (POST …/Messages.json), answered or not. */
  readonly submits: FakeTwilioSubmit[];
  /** Probes received (GET …/Accounts/{SID}.json). */
  probes: number;
  /** Submits awaiting their answer right now, and the most at once so far. */
  readonly inFlight: { now: number; max: number };
  /** Decides each submit's answer (default: 'default'). May be async (e.g. to hold answers). */
  answer: (s: FakeTwilioSubmit) => FakeAnswer | Promise<FakeAnswer>;
  /** Decides each probe's answer (default: 200 with the account). */
  probeAnswer: () => FakeAnswer;
  /** Stops listening and drops every connection (an outage: connections are refused). */
  goDown(): Promise<void>;
  /** Listens again on the same port. */
  comeBack(): Promise<void>;
  close(): Promise<void>;
}

export interface FakeTwilioOptions {
  port?: number;
  accountSid?: string;
  authToken?: string;
}

/** A sid as Twilio writes them: two letters and 32 hex digits. */
export function twilioSid(prefix: string): string {
  return prefix + randomBytes(16).toString('hex');
}

/** The strict form reading a test wants: repeated names kept, in order. */
export function readForm(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export async function startFakeTwilio(options: FakeTwilioOptions = {}): Promise<FakeTwilio> {
  const accountSid = options.accountSid ?? twilioSid('AC');
  const authToken = options.authToken ?? randomBytes(16).toString('hex');
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  const messagesPath = `/2010-04-01/Accounts/${accountSid}/Messages.json`;
  const accountPath = `/2010-04-01/Accounts/${accountSid}.json`;
  const sockets = new Set<Socket>();

  const send = (res: ServerResponse, a: Exclude<FakeAnswer, 'default' | 'hang' | 'destroy' | 'cut'>) => {
    const body = a.body ?? (a.json !== undefined ? JSON.stringify(a.json) : '');
    res.writeHead(a.status, { 'content-type': a.json !== undefined ? 'application/json' : 'text/plain', ...a.headers });
    res.end(body);
  };

  const fake: FakeTwilio = {
    url: '',
    port: 0,
    accountSid,
    authToken,
    submits: [],
    probes: 0,
    inFlight: { now: 0, max: 0 },
    answer: () => 'default',
    probeAnswer: () => ({ status: 200, json: { sid: accountSid, status: 'active' } }),
    goDown: async () => {
      await new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      });
    },
    comeBack: async () => {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(fake.port, '127.0.0.1', () => resolve());
      });
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const play = (req: IncomingMessage, res: ServerResponse, a: FakeAnswer, fallback: () => void) => {
    if (a === 'default') return fallback();
    if (a === 'hang') return;
    if (a === 'destroy') return req.socket.destroy();
    if (a === 'cut') {
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"sid":"SM');
      setTimeout(() => req.socket.destroy(), 5);
      return;
    }
    send(res, a);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answerRequest());
    const answerRequest = async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '';
      if (req.method === 'GET' && path === accountPath) {
        fake.probes++;
        return play(req, res, fake.probeAnswer(), () => send(res, { status: 200, json: { sid: accountSid, status: 'active' } }));
      }
      if (req.method !== 'POST' || path !== messagesPath)
        return send(res, { status: 404, json: { code: 20404, message: 'The requested resource was not found', status: 404 } });
      const submit: FakeTwilioSubmit = {
        n: fake.submits.length + 1,
        path,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        raw,
        form: readForm(raw),
      };
      fake.submits.push(submit);
      fake.inFlight.now++;
      fake.inFlight.max = Math.max(fake.inFlight.max, fake.inFlight.now);
      res.on('close', () => fake.inFlight.now--);
      const answer = await fake.answer(submit);
      play(req, res, answer, () => {
        if (submit.authorization !== expectedAuth)
          return send(res, {
            status: 401,
            json: { code: 20003, message: 'Authenticate', more_info: 'https://www.twilio.com/docs/errors/20003', status: 401 },
          });
        if (typeof submit.form.To !== 'string' || submit.form.To === '')
          return send(res, { status: 400, json: { code: 21604, message: "A 'To' phone number is required.", status: 400 } });
        submit.sid = twilioSid('SM');
        send(res, {
          status: 201,
          json: {
            sid: submit.sid,
            account_sid: accountSid,
            to: submit.form.To,
            from: submit.form.From,
            body: submit.form.Body,
            status: 'queued',
            num_media: String([submit.form.MediaUrl ?? []].flat().length),
          },
        });
      });
    };
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  Object.assign(fake, { port, url: `http://127.0.0.1:${port}` });
  return fake;
}

export interface CallbackReply {
  status: number;
  contentType: string | null;
  body: string;
}

/**
 * POSTs a callback as a Twilio-compatible provider does: form-encoded `params` (an array value
 * repeats the name) to `url`, with `X-Twilio-Signature` computed by the official `twilio`
 * package over `url` and `params` with `authToken`. `signature` overrides the header (a string)
 * or leaves it out (null).
 */
export async function postSignedCallback(
  url: string,
  authToken: string,
  params: Record<string, string | string[]>,
  signature?: string | null,
): Promise<CallbackReply> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of [v].flat()) form.append(k, x);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const sig = signature === undefined ? twilio.getExpectedTwilioSignature(authToken, url, params) : signature;
  if (sig !== null) headers['x-twilio-signature'] = sig;
  const res = await fetch(url, { method: 'POST', headers, body: form.toString(), signal: AbortSignal.timeout(10_000) });
  return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text() };
}
