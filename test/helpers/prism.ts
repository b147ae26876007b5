import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './net.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Twilio's own OpenAPI description of its 2010-04-01 API, as @twilio/cli-core ships it. */
export const TWILIO_API_DOCUMENT = join(ROOT, 'node_modules/@twilio/cli-core/src/services/twilio-api/twilio_api_v2010.json');
export const MESSAGES_PATH = '/2010-04-01/Accounts/{AccountSid}/Messages.json';

/** Twilio's document, parsed. */
// The document is read as the loose JSON it is; the tests' assertions check its shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function twilioApiDocument(): { paths: Record<string, Record<string, any>>; components: unknown } {
  return JSON.parse(readFileSync(TWILIO_API_DOCUMENT, 'utf8'));
}

/**
 * Twilio's document with ONE addition Prism 5.14 needs to read a repeated form field: the
 * Messages create operation's `MediaUrl` (an array) gets `encoding: {style: form, explode: true}`.
 * That is OpenAPI 3.0's own default for `application/x-www-form-urlencoded` (and how Twilio's
 * libraries send it: one `MediaUrl=` per link), but Prism applies no default: without it, any
 * MediaUrl is refused as "must be array". Prism then validates the LAST MediaUrl of a request
 * only (it keeps one value per name); the tests check every one against the schema with Ajv.
 * Nothing else of the document changes.
 */
export function twilioDocumentForPrism(): object {
  const doc = twilioApiDocument();
  const content = doc.paths[MESSAGES_PATH]!.post.requestBody.content['application/x-www-form-urlencoded'];
  if (content.encoding === undefined) content.encoding = { MediaUrl: { style: 'form', explode: true } };
  return doc;
}

export interface Prism {
  url: string;
  port: number;
  /** Prism's output so far (for a failure's message). */
  output(): string;
  close(): Promise<void>;
}

/**
 * Starts `prism mock` on loopback with request validation on (Prism validates every request
 * against the document by default: a violation answers 422/401/404 instead of a mock) and
 * `--errors` (a violation is an error response, never a warning). Waits (bounded) until it
 * answers HTTP. One per test file: start-up takes seconds (it reads a 5 MB document).
 */
export async function startPrism(document: object, { timeoutMs = 90_000 } = {}): Promise<Prism> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-prism-'));
  const file = join(dir, 'twilio_api_v2010.json');
  writeFileSync(file, JSON.stringify(document));
  const port = await freePort();
  let out = '';
  const child: ChildProcess = spawn(
    join(ROOT, 'node_modules/.bin/prism'),
    ['mock', file, '-p', String(port), '-h', '127.0.0.1', '--errors', '-v', 'warn'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const keep = (b: Buffer) => {
    out = (out + b.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      await close();
      throw new Error(`prism exited with ${child.exitCode} before listening:\n${out}`);
    }
    try {
      await fetch(`${url}/`, { signal: AbortSignal.timeout(1000) });
      break;
    } catch {
      if (Date.now() > deadline) {
        await close();
        throw new Error(`prism did not listen within ${timeoutMs} ms:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url, port, output: () => out, close };
}
