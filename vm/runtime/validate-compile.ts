/**
 * Compiles the first validation pass of a section into one JavaScript function, with each field's
 * read, type check and rule calls written out (as ajv does): property reads and call sites stay
 * monomorphic, and no per-field dispatch runs per request. Nothing from the app enters the
 * generated source as code: field names appear as JSON string literals, everything else
 * (defaults, rules, messages) by index into arrays the function closes over.
 */
import type { FieldType } from '../lang.js';
import { fromJson, type Value, type ValueObject } from '../values.js';

/** Whether a value is a list or object (mutable, so shared only by copy). */
function isData(v: Value | undefined): boolean {
  return v !== null && typeof v === 'object';
}

/** What the compiler needs of a field (see FieldPlan in validate.ts). */
export interface CompilableField {
  name: string;
  type: FieldType;
  required: boolean;
  fallback: Value | undefined;
  rules: { name: string; check: (value: Value, input: ValueObject) => boolean; message: string }[];
  inherited: boolean;
}

export interface FirstPassError {
  field: string;
  rule: string;
  message: string;
}

/** Reads, types and checks every field; `out` holds the fields that arrived or defaulted. */
export type FirstPass = (input: ValueObject, fromText: boolean) => { out: ValueObject; errors: FirstPassError[] | null };

type Coerce = (type: FieldType, raw: unknown, fromText: boolean) => Value | undefined;

/** Builds the first pass of `fields`, with `coerce` for every type but text (inlined). */
export function compileFirstPass(fields: readonly CompilableField[], coerce: Coerce, typeMessages: Readonly<Record<FieldType, string>>): FirstPass {
  const lines: string[] = ['let errors = null;', 'const out = {};'];
  fields.forEach((field, i) => {
    const key = JSON.stringify(field.name);
    const read = field.inherited ? `(hasOwn(input, ${key}) ? input[${key}] : undefined)` : `input[${key}]`;
    const emptyText = field.type === 'text' ? '' : ` || (fromText && raw${i} === '')`;
    const typed = field.type === 'text' ? `typeof raw${i} === 'string' ? raw${i} : undefined` : `coerce(${JSON.stringify(field.type)}, raw${i}, fromText)`;
    lines.push(`const raw${i} = ${read};`, `let v${i};`);
    lines.push(`if (raw${i} === undefined || raw${i} === null${emptyText}) {`);
    // A list or object default is copied: a route that changes its body must not change the next request's default.
    if (field.fallback !== undefined) lines.push(isData(field.fallback) ? `  v${i} = copy(F[${i}]);` : `  v${i} = F[${i}];`);
    else if (field.required) lines.push(`  (errors ??= []).push({ field: N[${i}], rule: 'required', message: 'is required' });`);
    lines.push('} else {', `  v${i} = ${typed};`);
    lines.push(`  if (v${i} === undefined) (errors ??= []).push({ field: N[${i}], rule: 'type', message: T[${i}] });`, '  else {');
    // Every failing rule is reported, not only the first.
    field.rules.forEach((_, r) => {
      lines.push(
        `    if (!R[${i}][${r}].check(v${i}, out)) (errors ??= []).push({ field: N[${i}], rule: R[${i}][${r}].name, message: R[${i}][${r}].message });`,
      );
    });
    lines.push('  }');
    lines.push('}');
    const store = field.inherited ? `defineData(out, ${key}, v${i})` : `out[${key}] = v${i}`;
    lines.push(`if (v${i} !== undefined) ${store};`);
  });
  lines.push('return { out, errors };');
  const factory = new Function(
    'F',
    'R',
    'N',
    'T',
    'coerce',
    'copy',
    'hasOwn',
    'defineData',
    `return function firstPass(input, fromText) {\n${lines.join('\n')}\n};`,
  );
  return factory(
    fields.map((f) => f.fallback),
    fields.map((f) => f.rules),
    fields.map((f) => f.name),
    fields.map((f) => typeMessages[f.type]),
    coerce,
    fromJson,
    (o: object, k: string) => Object.hasOwn(o, k),
    (o: object, k: string, value: Value) => Object.defineProperty(o, k, { value, writable: true, enumerable: true, configurable: true }),
  ) as FirstPass;
}
