/**
 * The watchdog over requests that wait (spec/language.md §7.3, time): one timer for the whole app, not
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
  /** Where the watchdog keeps it (-1 when it does not): the watchdog's to set. */
  slot: number;
  /** True once the client's connection is closed. */
  gone(): boolean;
  /** Ends the request now; called once, and never after the watchdog forgot it. */
  abandon(reason: AbandonReason): void;
}

/**
 * Requests that wait, checked every WATCH_INTERVAL_MS while there are any. Kept in an array in
 * which each knows its slot: adding and removing, once per asynchronous request, allocate nothing
 * (a Set rehashing under 60,000 adds and deletes a second cost a tenth of the server's time in GC).
 */
export class Watchdog {
  private readonly watched: Watched[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly now: () => number) {}

  /** Number of requests being watched. */
  get size(): number {
    return this.watched.length;
  }

  add(request: Watched): void {
    request.slot = this.watched.length;
    this.watched.push(request);
    if (this.timer === null) {
      this.timer = setInterval(() => this.sweep(), WATCH_INTERVAL_MS);
      // The watchdog never keeps a process alive on its own.
      this.timer.unref();
    }
  }

  /** Forgets a request (swap-remove); a request it does not hold is ignored. */
  delete(request: Watched): void {
    const slot = request.slot;
    if (slot < 0 || this.watched[slot] !== request) return;
    const last = this.watched.pop()!;
    if (last !== request) {
      this.watched[slot] = last;
      last.slot = slot;
    }
    request.slot = -1;
  }

  /** Abandons every request past its deadline or without its client; stops the timer once none is left. */
  sweep(): void {
    const now = this.now();
    const watched = this.watched;
    // Downwards: a removal moves the last request, already looked at, into the removed one's slot.
    for (let i = watched.length - 1; i >= 0; i--) {
      const request = watched[i]!;
      const reason: AbandonReason | null = request.gone() ? 'client_gone' : now > request.deadline ? 'deadline_exceeded' : null;
      if (reason === null) continue;
      this.delete(request);
      request.abandon(reason);
    }
    // Stopped here, not in delete: under light load the set empties after nearly every request.
    if (watched.length === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
