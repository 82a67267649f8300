/** The machine hands VALIDATE, RESPOND and FAIL to its host with the values as computed: it checks nothing that is HTTP's. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Op } from '../../../vm/bytecode/opcodes.js';
import type { RouteMeta } from '../../../vm/bytecode/module.js';
import { execute } from '../../../vm/interp/interpreter.js';
import type { VmHost } from '../../../vm/interp/program.js';
import { HALT } from '../../../plugins/sdk.js';
import type { Value } from '../../../vm/values.js';
import type { Literal } from '../../../vm/lang.js';
import { chunk, program, errorOf } from '../program-fixture.js';
import { RvmError } from '../../../vm/values.js';

/** A host that records what the machine hands it. */
function recordingHost(): VmHost & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  return {
    calls,
    validate: (route: RouteMeta, section: number) => void calls.push(['validate', route, section]),
    respondStatement: (fields: Value) => {
      calls.push(['respond', fields]);
      return HALT;
    },
    failStatement: (status: Value, message: Value) => {
      calls.push(['fail', status, message]);
      return HALT;
    },
  } as unknown as VmHost & { calls: unknown[][] };
}

test('RESPOND hands the object over as built, unknown fields and odd statuses included', () => {
  const host = recordingHost();
  const fields = { status: 1000, jsn: 1 };
  assert.equal(execute(program([chunk([Op.CONST, 0, Op.RESPOND], { consts: [fields as unknown as Literal] })]), 0, [], host), HALT);
  assert.deepEqual(host.calls, [['respond', fields]]);
});

test('FAIL hands over its status and message, whatever they are', () => {
  const host = recordingHost();
  assert.equal(execute(program([chunk([Op.CONST, 0, Op.CONST, 1, Op.FAIL], { consts: [200, null] })]), 0, [], host), HALT);
  assert.deepEqual(host.calls, [['fail', 200, null]]);
});

test('VALIDATE calls the host with the running route and the section, then runs on', () => {
  const host = recordingHost();
  const route = { method: 'POST', path: '/x' } as unknown as RouteMeta;
  const p = program([chunk([Op.VALIDATE, 1, Op.CONST, 0, Op.RETURN], { consts: [7] })]);
  p.chunks[0]!.route = route;
  assert.equal(execute(p, 0, [], host), 7);
  assert.deepEqual(host.calls, [['validate', route, 1]]);
});

test("a host's refusal is a located runtime error with the host's code", () => {
  const host = recordingHost();
  host.respondStatement = () => {
    throw new RvmError('no', 'invalid_status');
  };
  const e = errorOf(() => execute(program([chunk([Op.CONST, 0, Op.RESPOND], { consts: [{ status: 1 } as unknown as Literal] })]), 0, [], host));
  assert.equal(e.code, 'invalid_status');
  assert.equal(e.at, 'test.rvm:3', 'the line of RESPOND');
});
