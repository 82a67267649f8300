/**
 * A throwaway copy of examples/showcase for tests that load it: the showcase stores records
 * (SQLite in `<app>/.rvm/data.sqlite`), and no test may write into the repository's copy.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's showcase folder (read only). */
export const SHOWCASE_SOURCE = fileURLToPath(new URL('../../../examples/showcase', import.meta.url));

/** The showcase's demo accounts (auth.rvm's header). */
export const DEMO_ACCOUNTS = {
  ada: { email: 'ada@example.com', password: 'correct horse battery staple' },
  bob: { email: 'bob@example.com', password: 'hunter2-hunter2' },
} as const;

/**
 * Each Argon2id hash auth.rvm holds at production cost (half a second of CPU per sign-in), and a
 * hash of the same password at test cost (`"passwords": {"cost": "test"}`), which a copy holds
 * instead. The third is the hash an unknown e-mail is checked against, whose password no test
 * sends. showcase-auth checks the originals against DEMO_ACCOUNTS' passwords.
 */
export const DEMO_HASHES: ReadonlyMap<string, string> = new Map([
  [
    '$argon2id$v=19$m=65536,t=3,p=4$X3nKg9OrNPC/VGqwuFmVow$GyeEpkoqnzh+6trT9nunQMf8yWRXNA7l5WJMDI8xzQ8',
    '$argon2id$v=19$m=8,t=1,p=1$8O6JgE3os/3bZ9SppdVLZQ$5UOH1z9FhKckj6uHTecjoxpqDvxlb6BVxg1auQv/gCQ',
  ],
  [
    '$argon2id$v=19$m=65536,t=3,p=4$TYatFlii/XAqgHdEyDp1SQ$Z+PlovLAmbExmYxvmltVePLKr8ASU/seYYBt56aOqXg',
    '$argon2id$v=19$m=8,t=1,p=1$LKO4Y5gvR3ev9jzB/CYFAw$Q7p+qzvweLnL5Zu8dq/SNGVD9Vcu/mVEEnDsBWp8KLw',
  ],
  [
    '$argon2id$v=19$m=65536,t=3,p=4$Qz+U0XaaYKa3MlQjPvG9jw$9JPUSCGosF2Mk4ReuoRtn7HpEBQ+puGGFF8Lz4oXh3g',
    '$argon2id$v=19$m=8,t=1,p=1$jqC3q0Nb3QvGoC3ycGMEaQ$FtNVGeHBBGI5aWAAYd+Dwbpy9oL69tBwvOIV03CP8Ek',
  ],
]);

const ARGON2_HASH = /\$argon2id\$[^']+/g;

/**
 * Copies the showcase (without any `.rvm/`) into a new temp folder, hashing passwords at test cost:
 * its config gains `"passwords": {"cost": "test"}` and auth.rvm the demo hashes of that cost
 * (DEMO_HASHES). A copy `rvm run --prod` serves keeps production cost (`passwords: 'production'`):
 * --prod refuses the test cost. `remove()` deletes the folder.
 */
export function showcaseCopy(options: { passwords?: 'test' | 'production' } = {}): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-showcase-'));
  cpSync(SHOWCASE_SOURCE, dir, { recursive: true, filter: (src) => !src.split(sep).includes('.rvm') });
  if (options.passwords !== 'production') atTestCost(dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Makes the showcase copy in `dir` hash passwords at test cost, its demo hashes included. */
function atTestCost(dir: string): void {
  const config = join(dir, 'rvm.config.json');
  writeFileSync(config, JSON.stringify({ ...JSON.parse(readFileSync(config, 'utf8')), passwords: { cost: 'test' } }));
  const auth = join(dir, 'auth.rvm');
  writeFileSync(
    auth,
    readFileSync(auth, 'utf8').replace(ARGON2_HASH, (hash) => {
      const cheap = DEMO_HASHES.get(hash);
      if (cheap === undefined) throw new Error(`examples/showcase/auth.rvm holds a hash test/support/showcase.ts does not know: ${hash}`);
      return cheap;
    }),
  );
}
