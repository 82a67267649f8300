/**
 * Core natives and the request's budget: what they build holds to MAX_LIST_LENGTH and
 * MAX_TEXT_LENGTH (refused before it is built), and work that grows with the input is charged.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_LIST_LENGTH, MAX_TEXT_LENGTH } from '../../plugins/sdk.js';
import type { Value } from '../../plugins/sdk.js';
import { CHARS_PER_UNIT } from '../../vm/interp/budget.js';
import { fakeContext } from '../../plugins/testing.js';
import { coreNatives } from '../support/core-natives.js';

const { call, callIn, throwsCode } = coreNatives();

describe('core natives within the limits', () => {
  test('split builds exactly MAX_LIST_LENGTH items, and refuses one more without building it', () => {
    const atLimit = ','.repeat(MAX_LIST_LENGTH - 1);
    assert.equal((call('split', atLimit, ',') as string[]).length, MAX_LIST_LENGTH);
    const heapBefore = process.memoryUsage().heapUsed;
    throwsCode(() => call('split', atLimit + ',', ','), 'list_too_long');
    // Split into its 16.7 M one-character texts, it would take hundreds of megabytes.
    const big = 'a'.repeat(MAX_TEXT_LENGTH);
    throwsCode(() => call('split', big, ''), 'list_too_long');
    assert.ok(process.memoryUsage().heapUsed - heapBefore < 64 * 1024 * 1024, 'no list was built');
  });

  test('split into characters at the limit', () => {
    assert.equal((call('split', 'é'.repeat(MAX_LIST_LENGTH), '') as string[]).length, MAX_LIST_LENGTH);
    // Surrogate pairs count once: twice the UTF-16 units, still at the limit.
    assert.equal((call('split', '😀'.repeat(MAX_LIST_LENGTH), '') as string[]).length, MAX_LIST_LENGTH);
    throwsCode(() => call('split', 'é'.repeat(MAX_LIST_LENGTH + 1), ''), 'list_too_long');
  });

  test('replace builds exactly MAX_TEXT_LENGTH characters, and refuses one more before building it', () => {
    const text = 'ab'.repeat(MAX_TEXT_LENGTH / 4);
    const grown = call('replace', text, 'a', 'xxx') as string;
    assert.equal(grown.length, MAX_TEXT_LENGTH);
    throwsCode(() => call('replace', text + 'a', 'a', 'xxx'), 'text_too_long');
    // A replacement is literal text: no `$&` patterns.
    assert.equal(call('replace', 'a.b', '.', '$&$&'), 'a$&$&b');
    assert.equal(call('replace', 'aaa', 'aa', 'b'), 'ba');
  });

  test('join and upper refuse a text past MAX_TEXT_LENGTH', () => {
    const half = 'x'.repeat(MAX_TEXT_LENGTH / 2);
    assert.equal((call('join', [half, half]) as string).length, MAX_TEXT_LENGTH);
    throwsCode(() => call('join', [half, half], '-'), 'text_too_long');
    throwsCode(() => call('upper', 'ß'.repeat(MAX_TEXT_LENGTH / 2 + 1)), 'text_too_long');
  });

  test('natives charge the budget in proportion to their input', () => {
    const ctx = fakeContext();
    const text = 'line\n'.repeat(100_000);
    callIn(ctx, 'split', text, '\n');
    assert.ok(ctx.budget.charged >= text.length / CHARS_PER_UNIT + 100_000, `split charged ${ctx.budget.charged}`);
    for (const [name, args] of [
      ['replace', [text, 'line', 'x']],
      ['len', [text]],
      ['contains', [text, 'zzz']],
      ['lower', [text]],
      ['json_parse', [JSON.stringify(text)]],
      ['json_stringify', [[text]]],
      ['join', [[text, text]]],
      ['text', [[text]]],
    ] as [string, Value[]][]) {
      const fresh = fakeContext();
      callIn(fresh, name, ...args);
      assert.ok(fresh.budget.charged >= text.length / CHARS_PER_UNIT, `${name} charged ${fresh.budget.charged}`);
    }
  });
});
