/**
 * The watchdog over requests that wait (DESIGN §5.1 "Time"): one timer for the whole app, not
 * one per request, looks at every request that went asynchronous and abandons those past their
 * wall-clock deadline (queues, outbound calls, a native that never settles) or whose client has
 * gone. An abandoned request is answered at once; its VM never runs another instruction (the
 * budget's abort) and natives that listen to the budget's AbortSignal stop waiting.
 */

/** How often the watchdog looks: the deadline and a gone client are noticed within this. */
export const WATCH_INTERVAL_MS = 100;

/** Why a request was abandoned. */
export type AbandonReason = 'deadline_exceeded' | 'client_gone';

/** A request the watchdog looks after. */
export interface Watched {
  /** performance.now() past which it is abandoned. */
  readonly deadline: number;
  /** True once the client's connection is closed. */
  gone(): boolean;
  /** Ends the request now; called once, and never after the watchdog forgot it. */
  abandon(reason: AbandonReason): void;
}

/** Requests that wait, checked every WATCH_INTERVAL_MS while there are any. */
export class Watchdog {
  private readonly watched = new Set<Watched>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly now: () => number) {}

  /** Number of requests being watched. */
  get size(): number {
    return this.watched.size;
  }

  add(request: Watched): void {
    this.watched.add(request);
    if (this.timer === null) {
      this.timer = setInterval(() => this.sweep(), WATCH_INTERVAL_MS);
      // The watchdog never keeps a process alive on its own.
      this.timer.unref();
    }
  }

  delete(request: Watched): void {
    this.watched.delete(request);
    if (this.watched.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Abandons every request past its deadline or without its client. */
  sweep(): void {
    const now = this.now();
    for (const request of [...this.watched]) {
      const reason: AbandonReason | null = request.gone() ? 'client_gone' : now > request.deadline ? 'deadline_exceeded' : null;
      if (reason === null) continue;
      this.delete(request);
      request.abandon(reason);
    }
  }
}
