/**
 * The CPU budget of one request: fuel (loop iterations and calls), the CPU time its executions
 * have used, the time slice that is running now, and whether the request was aborted. Every
 * execution of a request (middleware, route, the guards they call) shares one Budget; natives
 * charge it for work that grows with their input. Knows nothing of HTTP.
 */
import { RvmError } from '../values.js';
import { RUNTIME } from '../errors.js';

/**
 * Backward jumps and calls one request may make. A loop iteration costs one unit, so this is
 * tens of millions of iterations: far beyond any real handler, and spent in well under a second.
 */
export const FUEL_BUDGET = 20_000_000;
/** CPU milliseconds one request may use, VM code and the synchronous natives it calls together. */
export const CPU_BUDGET_MS = 1000;
/**
 * How long a request runs before it lets others run: short enough that a runaway request delays
 * the others by a slice, not a second; long enough that yielding costs a few per cent at most.
 */
export const TIME_SLICE_MS = 10;
/**
 * Fuel and charged work between two checks of the clock (a mask: checks fall where the low bits
 * of the fuel are zero). 16 384 loop iterations are well under a millisecond, and a clock read at
 * every iteration would cost more than the iteration.
 */
export const CHECK_INTERVAL = 0x3fff;

/**
 * The rate at which natives charge, so that one unit costs about what one loop iteration of the
 * VM does. Measured on the development machine (Node 20, x64, 2 cores): an iteration of
 * `while i <= n { total = total + i; i = i + 1 }` takes 25–70 ns (40 M/s idle, 14 M/s under load);
 * scanning, copying or case-mapping text (split, replace, join, upper, includes) 1–4 ns a
 * character, so 16 characters make one unit; building or visiting a list item or object key
 * (split's list, Array.from of a text, JSON values, keys()) 5–70 ns, so one item is one unit.
 * Charges only bring the next clock check closer; the CPU time counted is the clock's.
 */
export const CHARS_PER_UNIT = 16;
/** See CHARS_PER_UNIT. */
export const UNITS_PER_ITEM = 1;

/** Limits of one Budget; the defaults are the constants above. */
export interface BudgetOptions {
  /** CPU milliseconds the request may use (CPU_BUDGET_MS). */
  cpuMs?: number;
  /** Milliseconds a slice runs before the request yields (TIME_SLICE_MS). */
  sliceMs?: number;
  /** Loop iterations and calls (FUEL_BUDGET). */
  fuel?: number;
}

/**
 * One request's budget. The interpreter spends `fuel` and calls `checkpoint()` at its fuel checks
 * and after a native whose charges crossed `nextCheck`; natives call `charge` (or `chargeText`,
 * `chargeItems`) before work that grows with their input, and read `signal` to stop waiting
 * once the request is aborted.
 */
export class Budget {
  readonly cpuMs: number;
  readonly sliceMs: number;
  /** The fuel it started with. */
  readonly fuelLimit: number;
  /**
   * Loop iterations and calls left; the interpreter decrements it in its hot loop and checks where
   * its value before the decrement is a multiple of CHECK_INTERVAL + 1, so the unit that takes
   * it below 0 (one past the budget) is always checked.
   */
  fuel: number;
  /** Units natives have charged so far. */
  charged = 0;
  /** The value of `charged` at which the interpreter checks the clock after a native. */
  nextCheck = CHECK_INTERVAL;
  /** CPU milliseconds of the slices that have ended. */
  usedMs = 0;
  /**
   * When the running slice started (performance.now()), or 0 when none is open. A slice opens at
   * its first check, not when the VM resumes: most executions end before their first check, and
   * a clock read costs as much as a small handler's whole run.
   */
  sliceStart = 0;
  #reason: RvmError | null = null;
  #controller: AbortController | null = null;

  constructor(options: BudgetOptions = {}) {
    this.cpuMs = options.cpuMs ?? CPU_BUDGET_MS;
    this.sliceMs = options.sliceMs ?? TIME_SLICE_MS;
    this.fuelLimit = options.fuel ?? FUEL_BUDGET;
    this.fuel = this.fuelLimit;
  }

  /**
   * Records `units` of work a native is about to do (one unit ≈ one loop iteration). Work large
   * enough to be worth a clock read opens the slice first, so its time is counted.
   */
  charge(units: number): void {
    if (units >= CHECK_INTERVAL && this.sliceStart === 0) this.sliceStart = performance.now();
    this.charged += units;
  }

  /** Charges the work of scanning or building `chars` characters of text. */
  chargeText(chars: number): void {
    this.charge(Math.ceil(chars / CHARS_PER_UNIT));
  }

  /** Charges the work of building or visiting `items` list items or object keys. */
  chargeItems(items: number): void {
    this.charge(items * UNITS_PER_ITEM);
  }

  /** True once `abort` was called (by the HTTP layer, or because a limit was reached). */
  get aborted(): boolean {
    return this.#reason !== null;
  }

  /** Why the request was aborted, or null. */
  get reason(): RvmError | null {
    return this.#reason;
  }

  /** Aborted together with the request: natives that wait pass it on (fetch, queues). */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    if (this.#reason !== null && !this.#controller.signal.aborted) this.#controller.abort(this.#reason);
    return this.#controller.signal;
  }

  /**
   * Ends the request: the VM runs no further instruction of it and throws `reason` (uncatchable)
   * where it resumes or checks next; `signal` fires. The first reason wins.
   */
  abort(reason: RvmError): void {
    if (this.#reason !== null) return;
    this.#reason = reason;
    // The next native's return then reaches a check at once.
    this.nextCheck = -1;
    this.#controller?.abort(reason);
  }

  /** CPU milliseconds used so far, the running slice included. */
  usedNow(): number {
    return this.sliceStart === 0 ? this.usedMs : this.usedMs + (performance.now() - this.sliceStart);
  }

  /**
   * A check point: throws the abort reason, `fuel_exhausted` or `cpu_budget_exceeded` (aborting
   * the request with it), and returns true when the running slice is spent and the execution
   * should yield (the slice is then closed).
   */
  checkpoint(): boolean {
    if (this.#reason !== null) throw this.#reason;
    this.nextCheck = this.charged + CHECK_INTERVAL;
    if (this.fuel < 0) throw this.exhausted(new RvmError(`execution ran out of fuel (${this.fuelLimit} loop iterations and calls)`, RUNTIME.fuel_exhausted));
    const now = performance.now();
    if (this.sliceStart === 0) {
      this.sliceStart = now;
      return false;
    }
    const slice = now - this.sliceStart;
    if (this.usedMs + slice > this.cpuMs) {
      this.usedMs += slice;
      this.sliceStart = 0;
      throw this.exhausted(new RvmError(`execution used more than ${this.cpuMs} ms of CPU`, RUNTIME.cpu_budget_exceeded));
    }
    if (slice <= this.sliceMs) return false;
    this.endSlice();
    return true;
  }

  /** Closes the running slice, if any, adding its time to `usedMs`: the request leaves the event loop. */
  endSlice(): void {
    if (this.sliceStart === 0) return;
    this.usedMs += performance.now() - this.sliceStart;
    this.sliceStart = 0;
  }

  private exhausted(error: RvmError): RvmError {
    this.abort(error);
    return error;
  }
}
