/**
 * The one reading of numbers from text, shared by `int()`/`number()` and by query, form and
 * multipart fields of type int/number.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { intFromText, numberFromText } from '../../../vm/values.js';
import { coerce } from '../../../vm/runtime/validate.js';

const INTS: [string, number | null][] = [
  ['12', 12],
  [' 12 ', 12],
  ['+7', 7],
  ['-7', -7],
  ['-0', 0],
  ['007', 7],
  ['9007199254740991', 9007199254740991],
  ['9007199254740992', null],
  ['', null],
  ['   ', null],
  ['+', null],
  ['-', null],
  ['1.5', null],
  ['1e3', null],
  ['12abc', null],
  ['0x10', null],
  ['1_000', null],
  ['٣', null],
  ['--1', null],
  ['+-1', null],
  ['1 2', null],
  ['\n5\t', 5],
];

const NUMBERS: [string, number | null][] = [
  ['1.5', 1.5],
  [' -2.5e3 ', -2500],
  ['.5', 0.5],
  ['5.', 5],
  ['-0', 0],
  ['1e400', null],
  ['Infinity', null],
  ['NaN', null],
  ['0x10', null],
  ['', null],
  ['1.5kg', null],
  ['1_000', null],
  ['+.5e-1', 0.05],
];

test('intFromText: an optionally signed run of ASCII digits within ±2^53, spaces around allowed', () => {
  for (const [text, expected] of INTS) {
    assert.equal(intFromText(text), expected, JSON.stringify(text));
    assert.ok(!Object.is(intFromText(text), -0), 'never -0');
  }
});

test('numberFromText: a finite decimal with optional fraction and exponent', () => {
  for (const [text, expected] of NUMBERS) assert.equal(numberFromText(text), expected, JSON.stringify(text));
});

test('int and number fields of a query, form or multipart body read text the same way', () => {
  for (const [text, expected] of INTS) assert.equal(coerce('int', text, true), expected ?? undefined, JSON.stringify(text));
  for (const [text, expected] of NUMBERS) assert.equal(coerce('number', text, true), expected ?? undefined, JSON.stringify(text));
  assert.equal(coerce('int', '12', false), undefined, 'JSON stays strict');
});
