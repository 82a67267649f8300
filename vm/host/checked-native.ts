/**
 * Argument checks driven by a native's declared parameters: the registry wraps each native once,
 * at registration, in one JavaScript function with each parameter's check written out (as the
 * validation compiler does), so the body receives values of the declared types and a call pays
 * a few `typeof` tests, not a loop over the parameters. Nothing from the plugin enters the
 * generated source: types map to fixed expressions, names reach the error by index.
 */
import { Lambda, type Value } from '../values.js';
import type { NativeFn, ParamSpec, ParamType } from './natives.js';
import { typeError } from './args.js';

/** Per checked type: the test an argument passes (a JS expression on it), and how the error names the type. */
const CHECKS: Readonly<Record<Exclude<ParamType, 'any'>, { test: (a: string) => string; expected: string }>> = {
  text: { test: (a) => `typeof ${a} === 'string'`, expected: 'text' },
  int: { test: (a) => `typeof ${a} === 'number' && Number.isInteger(${a})`, expected: 'an int' },
  number: { test: (a) => `typeof ${a} === 'number' && Number.isFinite(${a})`, expected: 'a number' },
  bool: { test: (a) => `typeof ${a} === 'boolean'`, expected: 'a bool' },
  list: { test: (a) => `Array.isArray(${a})`, expected: 'a list' },
  // A plain object or a host object (request.headers): every value that is neither null nor a list.
  object: { test: (a) => `${a} !== null && typeof ${a} === 'object' && !Array.isArray(${a})`, expected: 'an object' },
  lambda: { test: (a) => `${a} instanceof Lambda`, expected: 'a lambda' },
};

/** The check of one type as an expression on the argument `arg` (text of a JS identifier). */
function testOf(type: Exclude<ParamType, 'any'>, arg: string): string {
  return `(${CHECKS[type].test(arg)})`;
}

/** True when the registry checks a parameter's arguments: it names a type other than `any` and is not self-checked. */
function checked(p: ParamSpec): p is ParamSpec & { type: Exclude<ParamType, 'any'> } {
  return p.type !== undefined && p.type !== 'any' && p.selfChecked !== true;
}

/**
 * `fn` behind the checks of `params`: an argument of the wrong type is a `type_error`
 * (`lower() expects s to be text, got int`); an optional one may be null or left out; each
 * argument a rest parameter takes is checked. A native with nothing to check is returned as it is.
 */
export function checkedNative(name: string, fn: NativeFn, params: readonly ParamSpec[]): NativeFn {
  if (!params.some(checked)) return fn;
  const rest = params.at(-1)?.rest === true ? params.at(-1)! : null;
  const fixed = rest === null ? params : params.slice(0, -1);
  const names = fixed.map((_, i) => `a${i}`);
  const lines: string[] = [];
  fixed.forEach((p, i) => {
    if (!checked(p)) return;
    const test = testOf(p.type, names[i]!);
    const skip = p.optional ? `${names[i]} === undefined || ${names[i]} === null || ` : '';
    lines.push(`  if (!(${skip}${test})) throw wrong(${i}, ${names[i]});`);
  });
  if (rest !== null && checked(rest)) {
    lines.push(`  for (let i = 0; i < rest.length; i++) { const r = rest[i]; if (!${testOf(rest.type, 'r')}) throw wrong(${fixed.length}, r); }`);
  }
  const args = ['ctx', ...names, ...(rest === null ? [] : ['...rest'])].join(', ');
  const expected = params.map((p) => (checked(p) ? CHECKS[p.type].expected : ''));
  const wrong = (index: number, value: Value | undefined) => typeError(name, params[index]!.name, expected[index]!, value);
  const factory = new Function('fn', 'wrong', 'Lambda', `return function checkedNative(${args}) {\n${lines.join('\n')}\n  return fn(${args});\n};`);
  return factory(fn, wrong, Lambda) as NativeFn;
}
