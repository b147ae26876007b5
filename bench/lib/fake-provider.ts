/**
 * Starts the lean fake provider of bench/lib/fake-provider-server.ts (a Twilio-compatible API or
 * an Android phone's "SMS Gateway for Android") in its own process on 127.0.0.1, and reads its
 * counters. The process is registered with procs.ts, so `stopAll()` stops it too.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startServer, type Server } from './procs.ts';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'fake-provider-server.ts');

/** The fake's counters since it started (`GET /__bench/stats`). */
export interface FakeProviderStats {
  kind: 'twilio' | 'android';
  /** Submits received (well-formed or not). */
  submits: number;
  /** Submits answered 201 (Twilio) or 202 (android). */
  accepted: number;
  /** Submits to a recipient (Twilio) or with an id (android, answered 409) already seen. */
  duplicates: number;
  /** Requests refused: wrong credentials, a malformed submit. */
  refused: number;
  /** Twilio readiness probes (`GET …/Accounts/{SID}.json`). */
  probes: number;
  /** `MediaUrl` fields received, over all submits. */
  mediaUrls: number;
  /** The first `MediaUrl` received, or null. */
  sampleMediaUrl: string | null;
  /** Webhooks registered on the fake phone now. */
  webhooks: number;
}

/** A running fake: the procs.ts handle (CPU, peak RSS, stop) and its counters. */
export interface FakeProvider extends Server {
  readonly port: number;
  stats(): Promise<FakeProviderStats>;
}

/**
 * @param options.kind `twilio` (user = the account SID, password = the auth token) or `android`
 *   (the local server's user and password).
 * @param options.nodeArgs node flags of the fake's process (default `--no-memory-reducer`).
 * @throws Error when the fake does not answer within 30 s.
 */
export async function startFakeProvider(options: {
  kind: 'twilio' | 'android';
  user: string;
  password: string;
  nodeArgs?: string[];
}): Promise<FakeProvider> {
  const port = await freePort();
  const server = await startServer({
    name: `fake-${options.kind}`,
    nodeArgs: [...(options.nodeArgs ?? ['--no-memory-reducer']), '--import', 'tsx'],
    args: [SCRIPT, '--kind', options.kind, '--port', String(port), '--user', options.user, '--password', options.password],
    port,
    readyPath: '/__bench/stats',
  });
  return {
    ...server,
    port,
    stats: async () => (await (await fetch(`${server.url}/__bench/stats`)).json()) as FakeProviderStats,
  };
}
