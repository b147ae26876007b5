/** The part of a socket (net.Socket) whose idle timeout withoutIdleTimeout turns off. */
export interface IdleTimeoutSocket {
  /** The idle timeout in ms (0: none). */
  timeout?: number;
  setTimeout?: (ms: number) => unknown;
}

/**
 * Runs `fn` with the socket's idle timeout off, and sets the previous one back once `fn` settles:
 * for a request whose reply may come long after its last byte arrived (a large upload or import
 * being processed), which the server's idle timeout would otherwise cut. Without a socket (an
 * injected request), just runs `fn`.
 * @returns what `fn` resolved to; rejects with what it threw.
 */
export async function withoutIdleTimeout<T>(socket: IdleTimeoutSocket | undefined, fn: () => Promise<T>): Promise<T> {
  if (typeof socket?.setTimeout !== 'function') return fn();
  const previous = socket.timeout ?? 0;
  socket.setTimeout(0);
  try {
    return await fn();
  } finally {
    socket.setTimeout(previous);
  }
}
