/**
 * The records half of linking: the app's `type` declarations become RecordTypes handed to the
 * record provider, and the call sites that belong to it — `T.m(...)` for a type `T` and a
 * provider method `m`, and the steps of `save`, `delete` and `transaction` — are bound to natives
 * that call the provider, with their argument counts and known arguments checked.
 */
import { diagnostic, didYouMean, type Diagnostic } from '../diagnostics.js';
import type { ArgShape, CallRef, TypeMeta } from '../bytecode/module.js';
import { RawRequestArg, UNKNOWN, type KnownArg, type RecordType } from '../host/records.js';
import type { NativeFn } from '../host/natives.js';
import type { PluginRegistry } from '../host/registry.js';
import { arityMismatch, takesArguments } from '../arity.js';
import { RvmError } from '../values.js';
import { DIAG, HTTP } from '../errors.js';

/** Builds a type's `validate` (the runtime plans its fields with the registered validators). */
export type TypeValidation = (type: TypeMeta, file: string) => RecordType['validate'];

/** Without a validation engine (a bare link in tests), every write is refused as an rvm bug. */
export const NO_TYPE_VALIDATION: TypeValidation = () => () => {
  throw new RvmError('record validation is not available in this program', HTTP.internal_error.code);
};

/** Where a diagnostic of a call points. */
interface Site {
  file: string;
  line: number;
  col: number;
}

/** The steps `save`, `delete` and `transaction` compile to, by call reference name. */
const STEPS = {
  save: { step: 'save', argc: 1, what: "'save'" },
  delete: { step: 'delete', argc: 1, what: "'delete'" },
  'transaction.begin': { step: 'begin', argc: 0, what: "'transaction'" },
  'transaction.commit': { step: 'commit', argc: 0, what: "'transaction'" },
  'transaction.rollback': { step: 'rollback', argc: 1, what: "'transaction'" },
} as const;

/** The app's record types and the binders of the call sites that use them. */
export class RecordLinker {
  /** By type name. */
  readonly types = new Map<string, RecordType>();

  constructor(
    private readonly registry: PluginRegistry,
    private readonly validation: TypeValidation,
  ) {}

  /** Adds a `type` declaration of `file` (the caller has refused duplicate names). */
  add(meta: TypeMeta, file: string): void {
    const type: RecordType = Object.freeze({
      name: meta.name,
      fields: Object.freeze(
        meta.fields.map((f) =>
          Object.freeze({
            name: f.name,
            type: f.type,
            optional: f.optional,
            required: f.required,
            decorators: Object.freeze(f.decorators.map((d) => Object.freeze({ name: d.name, args: d.args }))),
            doc: f.doc,
          }),
        ),
      ),
      doc: meta.doc,
      file,
      line: meta.line,
      col: meta.col,
      validate: this.validation(meta, file),
    });
    this.types.set(meta.name, type);
  }

  /** Tells the provider every type, once they are all known. */
  declare(): void {
    const records = this.registry.records;
    if (records === null) return;
    records.declared = new Map(this.types);
    records.provider.declare?.([...this.types.values()]);
  }

  /** True when `name` is `T.m` with `T` a declared type: the call is the provider's, known or not. */
  owns(name: string): boolean {
    const dot = name.indexOf('.');
    return dot > 0 && this.types.has(name.slice(0, dot));
  }

  /** `Type.method` names that exist, for the nearest-name hint of an unknown function. */
  candidates(): string[] {
    const methods = [...(this.registry.records?.methods.keys() ?? [])];
    return [...this.types.keys()].flatMap((t) => methods.map((m) => `${t}.${m}`));
  }

  /** Binds `T.m(...)`; null (with a diagnostic) when the method is unknown, the count wrong or a known argument refused. */
  bindMethod(r: CallRef, at: Site, report: Diagnostic[]): { key: string; fn: NativeFn } | null {
    const dot = r.name.indexOf('.');
    const type = this.types.get(r.name.slice(0, dot))!;
    const name = r.name.slice(dot + 1);
    const records = this.registry.records;
    const length = r.name.length;
    if (records === null) {
      report.push(
        diagnostic(DIAG.E_UNKNOWN_FUNCTION, `'${r.name}': no plugin of this app provides records`, at, {
          length,
          hint: 'the standard records plugin answers Type.method calls',
        }),
      );
      return null;
    }
    const method = records.methods.get(name);
    if (method === undefined) {
      const names = [...records.methods.keys()];
      const hint =
        didYouMean(
          r.name,
          names.map((m) => `${type.name}.${m}`),
        ) ?? `record methods are ${names.join(', ')}`;
      report.push(diagnostic(DIAG.E_UNKNOWN_FUNCTION, `type '${type.name}' has no method '${name}'`, at, { length, hint }));
      return null;
    }
    const arity = arityMismatch(method.params, r.argc);
    if (arity !== null) {
      report.push(diagnostic(DIAG.E_ARITY, `'${r.name}' ${takesArguments(arity)}, got ${r.argc}`, at, { length }));
      return null;
    }
    const problem = r.args === undefined ? null : (records.provider.checkCall?.(type, name, r.args.map(knownArg)) ?? null);
    if (problem !== null) {
      report.push(diagnostic(DIAG.E_RECORD_QUERY, `${r.name}(): ${problem.message}`, at, { length, hint: problem.hint }));
      return null;
    }
    return { key: r.name, fn: method.bind(type) };
  }

  /** Binds one step of `save`, `delete` or `transaction` to the provider. */
  bindStep(r: CallRef, at: Site, report: Diagnostic[]): { key: string; fn: NativeFn } | null {
    const step = Object.hasOwn(STEPS, r.name) ? STEPS[r.name as keyof typeof STEPS] : null;
    if (step === null || step.argc !== r.argc) {
      report.push(diagnostic(DIAG.E_INTERNAL, `unknown record step '${r.name}'`, at));
      return null;
    }
    const records = this.registry.records;
    if (records === null) {
      // One diagnostic per statement: a transaction's commit and rollback steps add none.
      if (step.step !== 'commit' && step.step !== 'rollback') {
        report.push(
          diagnostic(DIAG.E_UNKNOWN_FUNCTION, `${step.what} needs records, and no plugin of this app provides them`, at, { length: step.what.length - 2 }),
        );
      }
      return null;
    }
    const provider = records.provider;
    const name = step.step;
    // `save`, `delete` and `rollback` take the value on the stack; `begin` and `commit` none.
    const fn: NativeFn =
      step.argc === 0
        ? (ctx) => provider[name as 'begin' | 'commit'](ctx)
        : (ctx, value) => provider[name as 'save' | 'delete' | 'rollback'](ctx, value ?? null);
    return { key: `record ${r.name}`, fn };
  }
}

/** The plugin-facing form of an argument shape: UNKNOWN where the compiler knew nothing. */
function knownArg(shape: ArgShape): KnownArg {
  switch (shape.k) {
    case 'c':
      return shape.v;
    case 'r':
      return new RawRequestArg(shape.s);
    case 'u':
      return UNKNOWN;
    case 'l':
      return shape.i.map(knownArg);
    case 'o': {
      const out: { [key: string]: KnownArg } = {};
      // defineProperty keeps a key named __proto__ an ordinary key.
      for (const [key, value] of shape.e) Object.defineProperty(out, key, { value: knownArg(value), enumerable: true, writable: true, configurable: true });
      return out;
    }
  }
}
