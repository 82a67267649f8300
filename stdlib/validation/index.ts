/**
 * The `validation` standard plugin: the 43 built-in validators (`@email`, `@min(8)`, ...), each
 * registered through the SDK's validator API like a third-party one, with its types, typed
 * arguments, message, JSON Schema keywords, bounds and fast-check arbitraries.
 */
import { definePlugin, type ValidatorSpec } from '../../plugins/sdk.js';
import { CHOICE_VALIDATORS } from './choice.js';
import type { ValidatorTable } from './common.js';
import { DATE_VALIDATORS } from './dates.js';
import { FILE_VALIDATORS } from './files.js';
import { FORMAT_VALIDATORS } from './formats.js';
import { LENGTH_VALIDATORS } from './lengths.js';
import { NUMBER_VALIDATORS } from './numbers.js';
import { PRESENCE_VALIDATORS } from './presence.js';
import { TEXT_VALIDATORS } from './text.js';

const TABLES: readonly ValidatorTable[] = [
  PRESENCE_VALIDATORS,
  LENGTH_VALIDATORS,
  NUMBER_VALIDATORS,
  CHOICE_VALIDATORS,
  TEXT_VALIDATORS,
  FORMAT_VALIDATORS,
  DATE_VALIDATORS,
  FILE_VALIDATORS,
];

/** Every built-in validator by name (aliases not included). */
export const VALIDATORS: Readonly<Record<string, ValidatorSpec>> = Object.freeze(Object.assign({}, ...TABLES) as Record<string, ValidatorSpec>);

/** The names of the 43 built-in validators. */
export const VALIDATOR_NAMES: readonly string[] = Object.freeze(Object.keys(VALIDATORS));

/** The validation plugin definition. */
export const validation = definePlugin({
  name: 'validation',
  version: '1.0.0',
  dependencies: ['core'],
  setup(rvm) {
    for (const name of VALIDATOR_NAMES) rvm.validator(name, VALIDATORS[name]!);
  },
});

export default validation;
