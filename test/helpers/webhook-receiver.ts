import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A real webhook receiver on loopback (API.md §12.5 tests). Every request is checked with
 * TWO independent verifiers: the `standardwebhooks` library's own `verify`, and a direct
 * HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}` keyed with the secret's bytes after
 * `whsec_`. `answer` decides the reply of each request (default 200); it may also never answer.
 */
export interface ReceivedWebhook {
  id: string;
  timestamp: number;
  signature: string;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Both verifiers accepted it. */
  verified: boolean;
  contentType: string | undefined;
}

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** The secret to verify with (set it after webhooks/create). */
  secret: string;
  answer: (r: ReceivedWebhook, n: number) => number | 'hang' | { status: number; headers: Record<string, string> };
  close(): Promise<void>;
}

/** HMAC-SHA256 of the Standard Webhooks content, written directly (no library). */
export function directSignature(secret: string, id: string, timestamp: number | string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export function verifyBoth(secret: string, headers: Record<string, string>, body: string, nowSeconds?: number): boolean {
  const direct = directSignature(secret, headers['webhook-id']!, headers['webhook-timestamp']!, body);
  const given = headers['webhook-signature'] ?? '';
  const directOk = given.length === direct.length && timingSafeEqual(Buffer.from(given), Buffer.from(direct));
  let libraryOk: boolean;
  try {
    // The library checks the timestamp against the real time (±5 min); tests on a manual clock far
    // from it pass its own time so only the signature is judged.
    if (nowSeconds !== undefined && Math.abs(nowSeconds - Date.now() / 1000) > 240) libraryOk = directOk;
    else {
      new Webhook(secret).verify(body, headers);
      libraryOk = true;
    }
  } catch {
    libraryOk = false;
  }
  return directOk && libraryOk;
}

export async function startReceiver(host = '127.0.0.1'): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const r: Receiver = {
    url: '',
    port: 0,
    received: [],
    secret: '',
    answer: () => 200,
    async close() {
      for (const res of hanging) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      const rec: ReceivedWebhook = {
        id: headers['webhook-id'],
        timestamp: Number(headers['webhook-timestamp']),
        signature: headers['webhook-signature'],
        body,
        json: JSON.parse(body || '{}') as ReceivedWebhook['json'],
        verified: r.secret !== '' && verifyBoth(r.secret, headers, body, Number(headers['webhook-timestamp'])),
        contentType: req.headers['content-type'],
      };
      r.received.push(rec);
      const a = r.answer(rec, r.received.length);
      if (a === 'hang') {
        hanging.add(res);
        return;
      }
      if (typeof a === 'number') res.writeHead(a).end();
      else res.writeHead(a.status, a.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://${host.includes(':') ? `[${host}]` : host}:${r.port}/hook`;
  return r;
}
