import net from 'node:net';
import tls from 'node:tls';
import { CMD, PduReader, STATUS, encodeBind, encodePdu, isResponse, respOf, statusName, type Pdu } from './smpp-codec.ts';

/**
 * One SMPP 3.4 connection bound as a transceiver (smpp.ts reconnects by opening a new one).
 * It owns the socket, the sequence numbers, the table of requests awaiting their response (each
 * with its own timer: the per-PDU response timeout), the enquire_link keep-alive, and the answers
 * to the peer's enquire_link and unbind. Everything else the peer sends (deliver_sm…) goes to
 * `onRequest`, which must answer it with `respond`.
 */

/** Where and how to connect and bind. */
export interface SessionOptions {
  host: string;
  port: number;
  /** TLS (smpps://). */
  tls: boolean;
  /** Extra TLS options (a private CA for tests: `{ ca }`); `servername` defaults to the host. */
  tlsOptions?: tls.ConnectionOptions;
  systemId: string;
  password: string;
  systemType?: string;
  /** Response timeout per PDU, ms (bind included; also bounds the TCP/TLS connect). */
  timeoutMs: number;
  /** enquire_link period, ms (0: never). */
  enquireMs: number;
  /** A request from the peer other than enquire_link / unbind (deliver_sm, …). */
  onRequest: (session: SmppSession, pdu: Pdu) => void;
  /** The connection is gone (called once; `err` undefined after our own close). */
  onClose?: (err: Error | undefined) => void;
}

/** A request's response did not come within the timeout (its outcome is unknown). */
export class SmppTimeoutError extends Error {
  override name = 'SmppTimeoutError';
}
/** The connection closed before the response came (its outcome is unknown). */
export class SmppClosedError extends Error {
  override name = 'SmppClosedError';
}
/** The SMSC refused the bind; `status` is its command_status (ESME_RINVPASWD, …). */
export class SmppBindError extends Error {
  override name = 'SmppBindError';
  constructor(readonly status: number) {
    super(`bind_transceiver refused: ${statusName(status)}`);
  }
}

interface Pending {
  resolve: (pdu: Pdu) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  commandId: number;
}

/**
 * Connects and binds as a transceiver. Resolves with the bound session; rejects with
 * SmppBindError (refused), SmppTimeoutError (no answer in `timeoutMs`) or the socket's error.
 */
export async function openSession(options: SessionOptions): Promise<SmppSession> {
  const socket = await connect(options);
  const session = new SmppSession(socket, options);
  try {
    const resp = await session.request(CMD.bind_transceiver, encodeBind(options));
    // A generic_nack is a refusal whatever its status (one with ESME_ROK is the SMSC's own error).
    if (resp.commandId !== respOf(CMD.bind_transceiver) || resp.status !== STATUS.ESME_ROK) throw new SmppBindError(resp.status);
  } catch (err) {
    session.destroy(err as Error);
    throw err;
  }
  session.startKeepAlive();
  return session;
}

function connect(o: SessionOptions): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = o.tls
      ? tls.connect({ host: o.host, port: o.port, servername: net.isIP(o.host) ? undefined : o.host, ...o.tlsOptions })
      : net.connect({ host: o.host, port: o.port });
    const timer = setTimeout(
      () => fail(new SmppTimeoutError(`connect to ${o.host}:${o.port} timed out after ${o.timeoutMs} ms`)),
      o.timeoutMs,
    );
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.once('error', fail);
    socket.once(o.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.off('error', fail);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

/** A bound (or binding) SMPP connection. */
export class SmppSession {
  private sequence = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly reader = new PduReader();
  private keepAlive: NodeJS.Timeout | undefined;
  private corked = false;
  private closedWith: Error | undefined | null = null;
  /** Resolves when the connection is gone, with the error that ended it (undefined: closed by us). */
  readonly closed: Promise<Error | undefined>;
  private resolveClosed!: (err: Error | undefined) => void;
  /** Responses that came after their request had timed out. */
  lateResponses = 0;

  constructor(
    private readonly socket: net.Socket,
    private readonly options: SessionOptions,
  ) {
    this.closed = new Promise((r) => (this.resolveClosed = r));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.destroy(err));
    socket.on('close', () => this.destroy(new SmppClosedError('connection closed by the peer')));
  }

  /** Whether the connection is still open. */
  get open(): boolean {
    return this.closedWith === null;
  }

  /** Requests awaiting their response. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends a request and resolves with its response PDU (whatever its command_status; a
   * generic_nack counts as the response). Rejects with SmppTimeoutError after `timeoutMs`, or
   * SmppClosedError when the connection goes first.
   */
  request(commandId: number, body?: Buffer): Promise<Pdu> {
    if (!this.open) return Promise.reject(new SmppClosedError('connection closed'));
    const sequence = (this.sequence = this.sequence >= 0x7fffffff ? 1 : this.sequence + 1);
    return new Promise<Pdu>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(sequence);
        reject(new SmppTimeoutError(`no response to ${commandId.toString(16)} #${sequence} within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      this.pending.set(sequence, { resolve, reject, timer, commandId });
      this.write(encodePdu(commandId, 0, sequence, body));
    });
  }

  /** Answers a request of the peer with its response command, `status` and `body`. */
  respond(request: Pdu, status: number, body?: Buffer): void {
    if (this.open) this.write(encodePdu(respOf(request.commandId), status, request.sequence, body));
  }

  /** Sends unbind and waits (at most the timeout) for unbind_resp, then closes. Pending requests fail with SmppClosedError. */
  async close(): Promise<void> {
    if (!this.open) return;
    try {
      await this.request(CMD.unbind);
    } catch {
      // Closing anyway.
    }
    this.destroy(undefined);
  }

  /** Closes the connection at once; pending requests fail with SmppClosedError. */
  destroy(err: Error | undefined): void {
    if (!this.open) return;
    this.closedWith = err;
    if (this.keepAlive) clearInterval(this.keepAlive);
    for (const [seq, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new SmppClosedError(err ? `connection lost: ${err.message}` : 'connection closed'));
      this.pending.delete(seq);
    }
    this.socket.destroy();
    this.options.onClose?.(err);
    this.resolveClosed(err);
  }

  /** Starts the enquire_link timer (after the bind): an unanswered enquire_link closes the connection. */
  startKeepAlive(): void {
    if (this.options.enquireMs <= 0 || this.keepAlive) return;
    this.keepAlive = setInterval(() => {
      this.request(CMD.enquire_link).catch((err: Error) => this.destroy(new Error(`enquire_link failed: ${err.message}`)));
    }, this.options.enquireMs);
    this.keepAlive.unref();
  }

  /** Writes with the socket corked until the next tick, so PDUs written in one tick leave in one segment. */
  private write(bytes: Buffer): void {
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(bytes);
  }

  private onData(chunk: Buffer): void {
    let pdus: Pdu[];
    try {
      pdus = this.reader.push(chunk);
    } catch (err) {
      this.destroy(err as Error);
      return;
    }
    for (const pdu of pdus) {
      if (!this.open) return;
      if (isResponse(pdu.commandId)) this.onResponse(pdu);
      else if (pdu.commandId === CMD.enquire_link) this.respond(pdu, STATUS.ESME_ROK);
      else if (pdu.commandId === CMD.unbind) {
        this.respond(pdu, STATUS.ESME_ROK);
        setImmediate(() => this.destroy(new SmppClosedError('unbound by the peer')));
      } else if (pdu.commandId === CMD.deliver_sm || pdu.commandId === CMD.data_sm) {
        this.options.onRequest(this, pdu);
      } else if (pdu.commandId === CMD.alert_notification) {
        // No response is defined for alert_notification.
      } else {
        this.write(encodePdu(CMD.generic_nack, STATUS.ESME_RINVCMDID, pdu.sequence));
      }
    }
  }

  private onResponse(pdu: Pdu): void {
    const p = this.pending.get(pdu.sequence);
    if (!p || (pdu.commandId !== respOf(p.commandId) && pdu.commandId !== CMD.generic_nack)) {
      this.lateResponses++;
      return;
    }
    clearTimeout(p.timer);
    this.pending.delete(pdu.sequence);
    p.resolve(pdu);
  }
}
