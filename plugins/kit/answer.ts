/**
 * Answers that are a value now or a Promise of it later. A native that can often answer at once
 * (SQLite with its connection free, an in-process store) returns the value itself, so the VM goes
 * on without suspending the request; a shared store or a network database answers later. These
 * helpers let one piece of code serve both without making everything a Promise.
 */

/** A result now, or a Promise of it. */
export type Answer<T> = T | Promise<T>;

/** Applies `f` to an answer: now when it is a value, when it settles when it is a Promise. */
export function andThen<T, U>(answer: Answer<T>, f: (value: T) => Answer<U>): Answer<U> {
  return answer instanceof Promise ? answer.then(f) : f(answer);
}

/** `work`'s answer, with anything it throws as a rejected Promise (one failure path for callers). */
export function answerOf<T>(work: () => Answer<T>): Answer<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}
