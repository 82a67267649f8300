/**
 * Where fibers that spent their time slice wait for their next one. One fiber resumes per turn
 * of the event loop, and I/O is served between turns: with N requests looping at once, a request
 * that only needs a moment waits about one slice, not N (each `setImmediate` of its own would
 * run all N slices back to back in one check phase).
 */

const waiting: (() => void)[] = [];
let turnScheduled = false;

/** Resolves after the event loop has served its I/O, in turn with the other fibers that yielded. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!turnScheduled) {
      turnScheduled = true;
      setImmediate(turn);
    }
  });
}

/** Lets the first waiting fiber run its slice; the rest wait for later turns. */
function turn(): void {
  const next = waiting.shift();
  if (waiting.length > 0) setImmediate(turn);
  else turnScheduled = false;
  next?.();
}
