import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { INSTRUCTION_SIZE, OPCODES, stackEffect } from '../../../vm/bytecode/opcodes.js';
import { BYTECODE_DOC_PATH, renderBytecodeDoc } from '../../../tools/gen-bytecode-doc.js';

describe('opcode table', () => {
  test('OPCODES[i].op === i for every row', () => {
    OPCODES.forEach((info, i) => assert.equal(info.op, i, `${info.name} sits at ${i} but says ${info.op}`));
  });

  test('the runtime Op enum maps each name to its index and has no member missing from the table', async () => {
    const mod: { Op?: Record<string, number | string> } = await import('../../../vm/bytecode/opcodes.js');
    assert.ok(mod.Op, 'Op must be emitted at runtime (tsconfig preserveConstEnums)');
    const names = Object.keys(mod.Op).filter((k) => Number.isNaN(Number(k)));
    assert.equal(names.length, OPCODES.length);
    for (const name of names) {
      const index = mod.Op[name] as number;
      assert.equal(OPCODES[index]?.name, name, `Op.${name} = ${index}`);
    }
    for (const info of OPCODES) assert.equal(mod.Op[info.name], info.op);
  });

  test('names are unique and every row has a doc and a stack diagram', () => {
    assert.equal(new Set(OPCODES.map((o) => o.name)).size, OPCODES.length);
    for (const info of OPCODES) {
      assert.match(info.doc, /\S/, `${info.name} has no doc`);
      assert.match(info.stack, /->/, `${info.name} has no stack diagram`);
    }
  });

  test('INSTRUCTION_SIZE is one plus the operand count', () => {
    assert.equal(INSTRUCTION_SIZE.length, OPCODES.length);
    OPCODES.forEach((info, i) => assert.equal(INSTRUCTION_SIZE[i], 1 + info.operands.length, info.name));
  });

  test('symbolic pop counts name an operand the instruction has', () => {
    for (const info of OPCODES) {
      if (info.pop === 'n' || info.pop === '2n') assert.equal(info.operands[0]?.name, 'n', info.name);
      if (info.pop === 'argc') assert.equal(info.operands[1]?.name, 'argc', info.name);
      if (info.pop === '1+argc') assert.equal(info.operands[0]?.name, 'argc', info.name);
      if (typeof info.pop === 'string') {
        const operands = info.operands.map(() => 3);
        const popped = { n: 3, '2n': 6, argc: 3, '1+argc': 4 }[info.pop];
        assert.equal(stackEffect(info.op, operands), info.push - popped, info.name);
      }
    }
  });

  test('spec/bytecode.md is up to date', () => {
    let committed = '';
    try {
      committed = readFileSync(BYTECODE_DOC_PATH, 'utf8');
    } catch {
      // An absent file fails the comparison below with the same advice.
    }
    assert.ok(committed === renderBytecodeDoc(), 'spec/bytecode.md is out of date: run `npx tsc -p . && node dist/tools/gen-bytecode-doc.js`');
  });
});
