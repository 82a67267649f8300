/**
 * What the requests of one event-loop turn share: a shared store's calls are gathered as they
 * come and handed over together when the turn ends (setImmediate), so under load many requests
 * pay one message to the primary (ipc.ts) or one round trip to Redis (redis.ts's windows).
 */
export class TurnBatch<T> {
  private items: T[] = [];

  constructor(
    /** Receives the items of a turn, in the order added; never an empty list. */
    private readonly send: (items: T[]) => void,
  ) {}

  /** Adds `item` to this turn's batch; the first of a turn schedules the send. */
  add(item: T): void {
    if (this.items.push(item) === 1) setImmediate(this.flush);
  }

  /** How many items wait for the end of the turn. */
  get size(): number {
    return this.items.length;
  }

  /** Takes the waiting items out now (they will not be sent): to fail them when the store closes. */
  take(): T[] {
    const items = this.items;
    this.items = [];
    return items;
  }

  private readonly flush = (): void => {
    const items = this.take();
    if (items.length > 0) this.send(items);
  };
}
