/**
 * An async mutex with a synchronous fast path, for the SQLite store: one connection serves every
 * request of the process, and a transaction holds the gate across the awaits between its
 * statements so no other request's statement runs inside it. Waiting is bounded: a waiter that
 * does not get in within `waitMs` fails with the error `onTimeout` makes.
 */
interface Waiter {
  resolve: () => void;
  timer: NodeJS.Timeout;
}

export class Gate {
  private held = false;
  private readonly waiters: Waiter[] = [];

  constructor(
    private readonly waitMs: number,
    private readonly onTimeout: () => Error,
  ) {}

  /** Takes the gate now when it is free and nobody waits; the caller must `release()`. */
  tryEnter(): boolean {
    if (this.held || this.waiters.length > 0) return false;
    this.held = true;
    return true;
  }

  /** Takes the gate, waiting in turn; rejects after `waitMs`. */
  enter(): Promise<void> {
    if (this.tryEnter()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          reject(this.onTimeout());
        }, this.waitMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Hands the gate to the next waiter, or frees it. */
  release(): void {
    const next = this.waiters.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve();
    } else this.held = false;
  }

  /** Runs `work` (synchronous: one statement or a few, never an await) holding the gate. */
  async run<T>(work: () => T): Promise<T> {
    if (!this.tryEnter()) await this.enter();
    try {
      return work();
    } finally {
      this.release();
    }
  }
}
