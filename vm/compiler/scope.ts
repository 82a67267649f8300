/**
 * Compile-time local variables of one chunk: block scopes mapping names to frame slots.
 * Slots are handed out like a stack, so a block's slots are reused once the block ends.
 */

/**
 * Most locals one chunk may have live at once. A frame is allocated per call with all its slots,
 * so a bound keeps frames small; real handlers use a handful, and 256 leaves generated code room.
 */
export const MAX_LOCALS = 256;

/** The block scopes of one chunk while it is being compiled. */
export class Scopes {
  private readonly blocks: Map<string, number>[] = [new Map()];
  /** First slot of each open block, so closing it frees exactly what it took. */
  private readonly starts: number[] = [0];
  private next = 0;
  /** Most slots live at the same time so far: the chunk's `slots`. */
  maxSlots = 0;

  /** Opens a block scope (if/for/while/try/catch body). */
  push(): void {
    this.blocks.push(new Map());
    this.starts.push(this.next);
  }

  /** Closes the innermost block scope; its slots become free for later blocks. */
  pop(): void {
    if (this.blocks.length === 1) return;
    this.blocks.pop();
    this.next = this.starts.pop()!;
  }

  /** The slot of a visible local, innermost first. */
  lookup(name: string): number | undefined {
    for (let i = this.blocks.length - 1; i >= 0; i--) {
      const slot = this.blocks[i]!.get(name);
      if (slot !== undefined) return slot;
    }
    return undefined;
  }

  /** Declares `name` in the innermost scope and returns its new slot (may exceed MAX_LOCALS; the caller reports that). */
  declare(name: string): number {
    const slot = this.next++;
    this.blocks[this.blocks.length - 1]!.set(name, slot);
    if (this.next > this.maxSlots) this.maxSlots = this.next;
    return slot;
  }

  /** Names of every visible local, for "did you mean" hints. */
  visible(): string[] {
    const names = new Set<string>();
    for (const block of this.blocks) for (const name of block.keys()) names.add(name);
    return [...names];
  }
}
