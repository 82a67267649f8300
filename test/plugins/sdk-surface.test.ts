/**
 * The public SDK's whole surface, pinned: every name `rvm-runtime/sdk` exports, whether it is a
 * value or a type, and its shape (a function's signature, an interface's members, a type's
 * definition), as the TypeScript checker sees plugins/sdk.ts. Written out, it must equal
 * plugins/sdk-surface.txt, so any change to what plugin authors build on shows in a diff of that
 * one file. After a deliberate change: `RVM_UPDATE_SDK_SURFACE=1 node --test dist/test/plugins/sdk-surface.test.js`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository: this file runs as dist/test/plugins/sdk-surface.test.js. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SDK = `${ROOT}plugins/sdk.ts`;
const SURFACE = `${ROOT}plugins/sdk-surface.txt`;

/** Longer types of values are written as their keys. */
const MAX_LINE = 300;
const FORMAT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseFullyQualifiedType | ts.TypeFormatFlags.WriteArrowStyleSignature;

/** One line per exported value, type alias and interface member, sorted. */
function surface(): string[] {
  const program = ts.createProgram([SDK], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(SDK)!)!;
  const text = (type: ts.Type, at: ts.Node): string => checker.typeToString(type, at, FORMAT).replaceAll(/import\("[^"]*"\)\./g, '');
  const lines: string[] = [];
  for (const exported of checker.getExportsOfModule(module)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declaration = symbol.declarations?.[0];
    if (declaration === undefined) throw new Error(`sdk.ts exports ${exported.name} without a declaration`);
    const name = exported.name;
    const typeOnly = exported.declarations?.some((d) => ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly)) ?? false;
    if (symbol.flags & ts.SymbolFlags.Class) {
      lines.push(`class ${name}${typeOnly ? ' (type only)' : ''}`);
      members(`class ${name}`, checker.getDeclaredTypeOfSymbol(symbol), declaration);
    } else if (symbol.flags & ts.SymbolFlags.Value) {
      lines.push(`value ${name}: ${valueText(checker.getTypeOfSymbolAtLocation(symbol, declaration), declaration)}`);
    }
    if (symbol.flags & ts.SymbolFlags.Interface) {
      const type = checker.getDeclaredTypeOfSymbol(symbol);
      members(`interface ${name}`, type, declaration);
      for (const signature of type.getCallSignatures()) lines.push(`interface ${name}(): ${checker.signatureToString(signature, declaration, FORMAT)}`);
    } else if (symbol.flags & ts.SymbolFlags.TypeAlias) {
      const alias = declaration as ts.TypeAliasDeclaration;
      lines.push(`type ${name} = ${alias.type.getText().replaceAll(/\s+/g, ' ')}`);
    }
  }
  return lines.sort();

  /** One line per public member of `type` (an interface's, or a class's instance side). */
  function members(prefix: string, type: ts.Type, at: ts.Node): void {
    for (const member of checker.getPropertiesOfType(type)) {
      const hidden = member.declarations?.some((d) => ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) ?? false;
      if (hidden || member.name.startsWith('#') || member.name.startsWith('__')) continue;
      const optional = member.flags & ts.SymbolFlags.Optional ? '?' : '';
      lines.push(`${prefix}.${member.name}${optional}: ${text(checker.getTypeOfSymbolAtLocation(member, at), at)}`);
    }
  }

  /** A value's type; a large object (the error catalogues) by its keys, so one line stays readable. */
  function valueText(type: ts.Type, at: ts.Node): string {
    const full = text(type, at);
    if (full.length <= MAX_LINE) return full;
    return `{ ${checker
      .getPropertiesOfType(type)
      .map((p) => p.name)
      .sort()
      .join(', ')} }`;
  }
}

test('the SDK exports exactly what plugins/sdk-surface.txt lists (names, kinds and shapes)', () => {
  const actual = surface();
  if (process.env.RVM_UPDATE_SDK_SURFACE === '1') writeFileSync(SURFACE, `${actual.join('\n')}\n`);
  const pinned = readFileSync(SURFACE, 'utf8').trimEnd().split('\n');
  const added = actual.filter((line) => !pinned.includes(line));
  const removed = pinned.filter((line) => !actual.includes(line));
  assert.deepEqual(
    { added, removed },
    { added: [], removed: [] },
    'the public SDK changed: if that is meant, update plugins/sdk-surface.txt (see the header of this test) and say so in spec/plugins/sdk.md',
  );
  assert.ok(actual.some((line) => line.startsWith('value definePlugin: ')));
  assert.ok(actual.some((line) => line.startsWith('interface CallContext.respond: ')));
});
