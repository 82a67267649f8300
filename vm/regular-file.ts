/**
 * The one way the server reads a file it did not just write (cached artefacts, bundles, secrets,
 * `rvm.config.json`): open it without blocking, look at what the descriptor is, and read only a
 * regular file under a size cap, from that same descriptor. Checking the path first and reading
 * it afterwards would let the file change between the two; a FIFO would block the open, and a
 * symlink to `/dev/zero` would be read until memory runs out.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/** A file refused by `readRegularFile`: not a regular file, or larger than the cap. */
export class UnreadableFileError extends Error {
  constructor(
    /** `not_regular` or `too_large`. */
    readonly reason: 'not_regular' | 'too_large',
    message: string,
  ) {
    super(message);
    this.name = 'UnreadableFileError';
  }
}

/** Opening a FIFO for reading waits for a writer; non-blocking, it returns at once and fstat tells what it is. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The bytes of the regular file at `path`, at most `maxBytes` of them. Throws UnreadableFileError
 * for a directory, device, FIFO or socket (symlinks are followed to what they point at) and for
 * a file over `maxBytes`, including one that grows past it while being read; errors of the open
 * itself (ENOENT, EACCES) are thrown as they are.
 */
export function readRegularFile(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UnreadableFileError('not_regular', `not a regular file (${kindOf(stat)})`);
    if (stat.size > maxBytes) throw new UnreadableFileError('too_large', `larger than ${maxBytes} bytes`);
    return readAll(fd, stat.size, maxBytes);
  } finally {
    closeSync(fd);
  }
}

/** Reads to the end: `expected` bytes, more if the file grew meanwhile, never more than `maxBytes`. */
function readAll(fd: number, expected: number, maxBytes: number): Buffer {
  // One byte more than expected shows at once whether the file grew.
  let buffer = Buffer.allocUnsafe(expected + 1);
  let used = 0;
  for (;;) {
    if (used === buffer.length) {
      if (used > maxBytes) throw new UnreadableFileError('too_large', `larger than ${maxBytes} bytes`);
      const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, buffer.length * 2));
      buffer.copy(bigger, 0, 0, used);
      buffer = bigger;
    }
    const n = readSync(fd, buffer, used, buffer.length - used, null);
    if (n === 0) return buffer.subarray(0, used);
    used += n;
  }
}

function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  return 'not a file';
}
