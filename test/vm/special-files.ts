/**
 * Special files planted where the server expects a regular one (cache entries, bundles, secrets,
 * the config file), for the tests that prove they are refused rather than read.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/** Creates `dir/name` as a FIFO (no writer), a symlink to /dev/zero, or a directory; returns its path. */
export function plantSpecial(dir: string, name: string, kind: 'fifo' | 'dev-zero' | 'directory'): string {
  const path = join(dir, name);
  if (kind === 'fifo') execFileSync('mkfifo', [path]);
  else if (kind === 'dev-zero') symlinkSync('/dev/zero', path);
  else mkdirSync(path);
  return path;
}
