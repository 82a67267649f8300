/**
 * Backup codes (spec/plugins/auth.md, "TOTP and backup codes"): ten codes of 50 bits in the xxxxx-xxxxx format, stored only as scrypt
 * hashes with one salt per list, used once (the list answered without the code; a concurrent
 * second use refused by the shared store), case/space/dash-insensitive, malformed input null.
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { RvmError } from '../../plugins/sdk.js';
import { testApp } from '../../plugins/testing.js';
import { createInProcessStore } from '../../vm/runtime/stores/memory.js';
import { FIRST_LOCKOUT_MS, Lockout, MAX_WRONG_CODES } from '../../stdlib/auth/attempts.js';
import {
  BACKUP_CODE_COUNT,
  BACKUP_CODE_USE_MARK_TTL_MS,
  MAX_BACKUP_CODE_INPUT_CHARS,
  MAX_STORED_BACKUP_CODES,
  generateBackupCodes,
  hashBackupCodes,
  normaliseBackupCode,
  useBackupCode,
} from '../../stdlib/auth/backup-codes.js';

const FORMAT = /^[a-z2-7]{5}-[a-z2-7]{5}$/;

function rvmErrorCode(code: string) {
  return (error: unknown) => error instanceof RvmError && error.code === code;
}

describe('backup_codes_generate', () => {
  test('ten codes xxxxx-xxxxx from a-z and 2-7 (50 bits each), all different', () => {
    const codes = generateBackupCodes();
    assert.equal(codes.length, BACKUP_CODE_COUNT);
    for (const code of codes) assert.match(code, FORMAT);
    assert.equal(new Set(codes).size, BACKUP_CODE_COUNT);
  });

  test('entropy: over 2,000 codes every one of the 32 characters appears in every position, roughly evenly', () => {
    const counts = Array.from({ length: 10 }, () => new Map<string, number>());
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      for (const code of generateBackupCodes()) {
        seen.add(code);
        [...code.replace('-', '')].forEach((c, at) => counts[at]!.set(c, (counts[at]!.get(c) ?? 0) + 1));
      }
    }
    assert.equal(seen.size, 2000, 'no repeats among 2,000 codes of 50 bits');
    for (const position of counts) {
      assert.equal(position.size, 32);
      // Expected 62.5 per character; a biased generator (e.g. modulo 36) falls outside.
      for (const n of position.values()) assert.ok(n > 25 && n < 110, `count ${n}`);
    }
  });
});

describe('backup_codes_hash and backup_code_use', () => {
  let codes: string[];
  let stored: string[];
  before(async () => {
    codes = generateBackupCodes();
    stored = await hashBackupCodes(codes);
  });

  test('each code is stored as $scrypt$ln=14,r=8,p=1$salt$hash with one salt for the list, never in clear', () => {
    assert.equal(stored.length, codes.length);
    const salts = new Set<string>();
    stored.forEach((entry, i) => {
      const match = /^\$scrypt\$ln=14,r=8,p=1\$([A-Za-z0-9+/]{22})\$([A-Za-z0-9+/]{43})$/.exec(entry);
      assert.ok(match, entry);
      salts.add(match[1]!);
      assert.ok(!entry.includes(codes[i]!.replace('-', '')));
      // An independent scrypt of the normalised code gives the stored hash.
      const expected = scryptSync(codes[i]!.replace('-', ''), Buffer.from(match[1]!, 'base64'), 32, { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
      assert.equal(match[2], expected.toString('base64').replace(/=+$/, ''));
    });
    assert.equal(salts.size, 1);
  });

  test('two hashings of one list differ (fresh salt)', async () => {
    assert.notDeepEqual(await hashBackupCodes(codes.slice(0, 1)), stored.slice(0, 1));
  });

  test('a code is used once: the list comes back without it, and the shortened list refuses it', async () => {
    const store = createInProcessStore();
    const after = await useBackupCode(store, codes[3], stored);
    assert.deepEqual(
      after,
      stored.filter((_, i) => i !== 3),
    );
    assert.equal(await useBackupCode(store, codes[3], after!), null);
    assert.equal(await useBackupCode(store, codes[3], stored), null, 'the old list too, while the store remembers the use');
    assert.deepEqual(
      await useBackupCode(store, codes[4], after!),
      after!.filter((entry) => entry !== stored[4]),
    );
  });

  test('case, spaces and dashes do not matter', async () => {
    const code = codes[0]!;
    const spelled = ` ${code.toUpperCase().replace('-', ' - ')} `;
    assert.deepEqual(await useBackupCode(createInProcessStore(), spelled, stored), stored.slice(1));
    assert.deepEqual(await useBackupCode(createInProcessStore(), code.replace('-', ''), stored), stored.slice(1));
  });

  test('a code not in the list is null', async () => {
    const other = generateBackupCodes()[0]!;
    assert.equal(await useBackupCode(createInProcessStore(), other, stored), null);
  });

  test(`MAX_WRONG_CODES (${MAX_WRONG_CODES}) wrong codes lock the list out for FIRST_LOCKOUT_MS: a right code is refused until it ends, and used after`, async () => {
    let clock = 5_000_000;
    const store = createInProcessStore({ now: () => clock });
    const now = () => clock;
    const wrong = generateBackupCodes();
    for (let i = 0; i < MAX_WRONG_CODES; i++) assert.equal(await useBackupCode(store, wrong[i], stored, undefined, now), null, `wrong code ${i + 1}`);
    assert.deepEqual(await useBackupCode(store, codes[7], stored, undefined, now), new Lockout(FIRST_LOCKOUT_MS));
    clock += FIRST_LOCKOUT_MS;
    const left = await useBackupCode(store, codes[7], stored, undefined, now);
    assert.ok(Array.isArray(left) && left.length === stored.length - 1);
    // The shortened list shares the count (same salt): a right code reset it.
    for (let i = 0; i < MAX_WRONG_CODES - 1; i++) assert.equal(await useBackupCode(store, wrong[i], left, undefined, now), null);
    assert.ok(Array.isArray(await useBackupCode(store, codes[8], left, undefined, now)));
  });

  test('two concurrent uses of one code: exactly one gets the shortened list', async () => {
    const store = createInProcessStore();
    const results = await Promise.all([useBackupCode(store, codes[5], stored), useBackupCode(store, codes[5], stored)]);
    assert.equal(results.filter((r) => r !== null).length, 1);
  });

  test(`the use mark lives BACKUP_CODE_USE_MARK_TTL_MS (${BACKUP_CODE_USE_MARK_TTL_MS} ms)`, async () => {
    let clock = 1_000_000;
    const store = createInProcessStore({ now: () => clock });
    assert.notEqual(await useBackupCode(store, codes[6], stored), null);
    clock += BACKUP_CODE_USE_MARK_TTL_MS - 1;
    assert.equal(await useBackupCode(store, codes[6], stored), null);
    clock += 1;
    assert.notEqual(await useBackupCode(store, codes[6], stored), null, 'an app that never saved the list gets the code back a day later');
  });

  test('malformed code or list is null, never an exception', async () => {
    const store = createInProcessStore();
    const bad: [unknown, unknown][] = [
      [null, stored],
      [42, stored],
      ['', stored],
      ['abcde-fghi', stored],
      ['abcde-fghij1', stored],
      ['abcde-fgh1j', stored],
      [codes[0], null],
      [codes[0], 'text'],
      [codes[0], []],
      [codes[0], [42]],
      [codes[0], [...stored.slice(1), 'plain']],
      [codes[0], [stored[0]!.replace('ln=14', 'ln=20')]], // a cost bomb is not read
      [codes[0], [stored[0]!.slice(0, -2)]],
    ];
    for (const [code, list] of bad) assert.equal(await useBackupCode(store, code as string, list as string[]), null, JSON.stringify([code, list]).slice(0, 80));
  });

  test(`limits: a list of ${MAX_STORED_BACKUP_CODES} is read, one more is null; input up to ${MAX_BACKUP_CODE_INPUT_CHARS} characters`, async () => {
    const twenty = [...stored, ...(await hashBackupCodes(generateBackupCodes()))];
    assert.equal(twenty.length, MAX_STORED_BACKUP_CODES);
    assert.notEqual(await useBackupCode(createInProcessStore(), codes[7], twenty), null);
    assert.equal(await useBackupCode(createInProcessStore(), codes[7], [...twenty, stored[0]!]), null);
    const padded = codes[8]!.padEnd(MAX_BACKUP_CODE_INPUT_CHARS, ' ');
    assert.equal(normaliseBackupCode(padded), codes[8]!.replace('-', ''));
    assert.equal(normaliseBackupCode(padded + ' '), null);
  });

  test('backup_codes_hash refuses an empty list, one over the limit and items that are not codes (invalid_argument)', async () => {
    await assert.rejects(hashBackupCodes([]), rvmErrorCode('invalid_argument'));
    await assert.rejects(hashBackupCodes(Array(MAX_STORED_BACKUP_CODES + 1).fill(codes[0])), rvmErrorCode('invalid_argument'));
    await assert.rejects(hashBackupCodes(['not a code']), rvmErrorCode('invalid_argument'));
    await assert.rejects(hashBackupCodes([42]), rvmErrorCode('invalid_argument'));
  });
});

describe('backup codes through routes', () => {
  test('generate, hash, use once; the list answered is one shorter', async () => {
    const app = await testApp({
      files: {
        'codes.rvm': `
route GET /codes {
  codes = backup_codes_generate()
  response.ok({ codes: codes, stored: backup_codes_hash(codes) })
}
route POST /use {
  response.ok({ left: backup_code_use(request.body.code, request.body.stored) })
}
`,
      },
    });
    try {
      const { codes, stored } = (await app.inject({ url: '/codes' })).json() as { codes: string[]; stored: string[] };
      assert.equal(codes.length, 10);
      const use = async (body: object) => (await app.inject({ method: 'POST', url: '/use', body })).json() as { left: string[] | null };
      const first = await use({ code: codes[2], stored });
      assert.equal(first.left!.length, 9);
      assert.equal((await use({ code: codes[2], stored: first.left })).left, null);
      assert.equal((await use({ code: 12345, stored })).left, null);
      assert.equal((await use({ code: codes[3], stored: 'x' })).left, null);
      // Guessing: with the used code tried again above, five wrong codes answer null; the sixth try (the right code) 429 too_many_attempts.
      const wrong = generateBackupCodes();
      for (let i = 0; i < MAX_WRONG_CODES - 1; i++) assert.equal((await use({ code: wrong[i], stored: first.left })).left, null);
      const refused = await app.inject({ method: 'POST', url: '/use', body: { code: codes[4], stored: first.left } });
      assert.equal(refused.status, 429);
      assert.deepEqual(refused.json(), { error: `Too many wrong codes; try again later (retry in ${FIRST_LOCKOUT_MS / 1000} s)`, code: 'too_many_attempts' });
      assert.equal(refused.headers['retry-after'], String(FIRST_LOCKOUT_MS / 1000));
    } finally {
      await app.close();
    }
  });
});
