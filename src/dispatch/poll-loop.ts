/**
 * The loop of the background workers (the dispatcher, the scheduler of scheduled messages and the
 * webhook deliverer, API.md §10.6, §11.2, §12): rounds back to back while there is work, one
 * every `pollMs` (real time) when idle. A failed round (database unavailable…) is reported to
 * `onError` and the loop goes on after `pollMs`.
 *
 * Between busy rounds it goes back to the event loop (setImmediate): on SQLite (better-sqlite3 is
 * synchronous) a round is all microtasks, so without this a backlog would be drained without ever
 * letting the HTTP server of `msgsvc serve` (or the log's writes) run: 100,000 queued messages froze
 * the event loop for ~6 s.
 */
export class PollLoop {
  private stopping = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  /**
   * @param options.round one round; resolves true when it found work (run the next one at once).
   * @param options.pollMs the idle wait between rounds, in ms.
   */
  constructor(private readonly options: { round: () => Promise<boolean>; pollMs: number; onError: (err: unknown) => void }) {}

  /** True between start() and the end of stop(). */
  get running(): boolean {
    return this.loop !== undefined;
  }

  /** Starts the loop (once; a second call does nothing). */
  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /** Stops after the round in progress (its outcomes are written), waking an idle wait. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let busy = false;
      try {
        busy = await this.options.round();
      } catch (err) {
        this.options.onError(err);
      }
      if (busy) await new Promise<void>((resolve) => setImmediate(resolve));
      else if (!this.stopping) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.pollMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }
}
