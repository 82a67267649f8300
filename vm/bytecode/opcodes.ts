/**
 * The one opcode table. The compiler (stack depth), the interpreter, the disassembler and
 * spec/bytecode.md all read it; test/vm/bytecode/opcodes.test.ts keeps the enum and the table in step.
 *
 * Code is an Int32Array: each instruction is its opcode followed by its operands, whose count
 * and meaning the table gives. Jump targets are absolute code offsets.
 */

// biome-ignore lint/suspicious/noConstEnum: tsc compiles the whole program (no isolatedModules), so each Op.X is inlined as a number in the interpreter's switch
export const enum Op {
  CONST,
  NULL,
  TRUE,
  FALSE,
  POP,
  DUP,
  LOAD_LOCAL,
  STORE_LOCAL,
  LOAD_AMBIENT,
  GET_FIELD,
  GET_INDEX,
  SET_FIELD,
  SET_INDEX,
  LIST,
  OBJECT,
  TEMPLATE,
  ADD,
  SUB,
  MUL,
  DIV,
  MOD,
  NEG,
  NOT,
  EQ,
  NE,
  LT,
  LE,
  GT,
  GE,
  JUMP,
  JUMP_IF_FALSE,
  JUMP_IF_FALSE_OR_POP,
  JUMP_IF_TRUE_OR_POP,
  JUMP_IF_NOT_NULL_OR_POP,
  LOOP,
  ITER_INIT,
  ITER_NEXT,
  ITER_NEXT_PAIR,
  CALL,
  CALL_FN,
  CALL_NATIVE,
  RETURN,
  TRY,
  END_TRY,
  FAIL,
  RESPOND,
  VALIDATE,
  READ_BODY,
  POW,
  JUMP_IF_NULL,
  DUP2,
  THROW,
  MAKE_LAMBDA,
  CALL_VALUE,
  APPEND,
  ITER_LIST,
}

/** What an operand means; the disassembler renders each kind its own way. */
export type OperandKind =
  | 'const' // index into the chunk's constant pool
  | 'slot' // local slot of the current frame
  | 'ambient' // index into AMBIENT_NAMES
  | 'count' // number of stack values the instruction takes
  | 'target' // absolute code offset
  | 'ref' // index into the chunk's unlinked call references
  | 'chunk' // index into the program's chunk table (after linking)
  | 'native' // index into the program's native table (after linking)
  | 'lambda' // index of a lambda chunk in the module (the loader makes it a program index)
  | 'section'; // 0 = validate (body), 1 = query

export interface OpInfo {
  op: Op;
  name: string;
  operands: readonly { name: string; kind: OperandKind }[];
  /** Values popped on the fall-through path: a number, or the name of the operand giving it. */
  pop: number | 'n' | '2n' | 'argc' | '1+argc';
  /** Values pushed on the fall-through path. */
  push: number;
  /** Stack diagram, top of stack on the right. */
  stack: string;
  doc: string;
}

const k = { name: 'k', kind: 'const' } as const;
const slot = { name: 'slot', kind: 'slot' } as const;
const n = { name: 'n', kind: 'count' } as const;
const target = { name: 'target', kind: 'target' } as const;
const argc = { name: 'argc', kind: 'count' } as const;
const lambdaChunk = { name: 'lambda', kind: 'lambda' } as const;

/** Ambient names readable in every chunk; LOAD_AMBIENT's operand indexes this list. */
export const AMBIENT_NAMES = ['request', 'body', 'params', 'query', 'response', 'state'] as const;
export type AmbientName = (typeof AMBIENT_NAMES)[number];

// biome-ignore format: one row per opcode, read as a table
export const OPCODES: readonly OpInfo[] = [
  { op: Op.CONST, name: 'CONST', operands: [k], pop: 0, push: 1, stack: '-> consts[k]', doc: 'Push a constant.' },
  { op: Op.NULL, name: 'NULL', operands: [], pop: 0, push: 1, stack: '-> null', doc: 'Push null.' },
  { op: Op.TRUE, name: 'TRUE', operands: [], pop: 0, push: 1, stack: '-> true', doc: 'Push true.' },
  { op: Op.FALSE, name: 'FALSE', operands: [], pop: 0, push: 1, stack: '-> false', doc: 'Push false.' },
  { op: Op.POP, name: 'POP', operands: [], pop: 1, push: 0, stack: 'a ->', doc: 'Discard the top value.' },
  { op: Op.DUP, name: 'DUP', operands: [], pop: 1, push: 2, stack: 'a -> a a', doc: 'Duplicate the top value.' },
  { op: Op.LOAD_LOCAL, name: 'LOAD_LOCAL', operands: [slot], pop: 0, push: 1, stack: '-> locals[slot]', doc: 'Push a local variable.' },
  { op: Op.STORE_LOCAL, name: 'STORE_LOCAL', operands: [slot], pop: 1, push: 0, stack: 'v ->', doc: 'Pop into a local variable.' },
  { op: Op.LOAD_AMBIENT, name: 'LOAD_AMBIENT', operands: [{ name: 'name', kind: 'ambient' }], pop: 0, push: 1, stack: '-> request|body|params|query|response|state', doc: 'Push one of the request-scoped values (AMBIENT_NAMES).' },
  { op: Op.GET_FIELD, name: 'GET_FIELD', operands: [k], pop: 1, push: 1, stack: 'obj -> obj.consts[k]', doc: 'Read a field; a missing field is null, a field of null is a runtime error.' },
  { op: Op.GET_INDEX, name: 'GET_INDEX', operands: [], pop: 2, push: 1, stack: 'obj i -> obj[i]', doc: 'Index a list (by int), object (by text) or text (by int); out of range is null.' },
  { op: Op.SET_FIELD, name: 'SET_FIELD', operands: [k], pop: 2, push: 0, stack: 'obj v ->', doc: 'Write a field of an object.' },
  { op: Op.SET_INDEX, name: 'SET_INDEX', operands: [], pop: 3, push: 0, stack: 'obj i v ->', doc: 'Write a list element or object field.' },
  { op: Op.LIST, name: 'LIST', operands: [n], pop: 'n', push: 1, stack: 'v1 .. vn -> [v1 .. vn]', doc: 'Build a list from n values.' },
  { op: Op.OBJECT, name: 'OBJECT', operands: [n], pop: '2n', push: 1, stack: 'k1 v1 .. kn vn -> {k1: v1 ..}', doc: 'Build an object from n key/value pairs.' },
  { op: Op.TEMPLATE, name: 'TEMPLATE', operands: [n], pop: 'n', push: 1, stack: 'p1 .. pn -> text', doc: 'Join n values as text (string interpolation).' },
  { op: Op.ADD, name: 'ADD', operands: [], pop: 2, push: 1, stack: 'a b -> a+b', doc: 'Add numbers, concatenate when either side is text, join two lists.' },
  { op: Op.SUB, name: 'SUB', operands: [], pop: 2, push: 1, stack: 'a b -> a-b', doc: 'Subtract numbers.' },
  { op: Op.MUL, name: 'MUL', operands: [], pop: 2, push: 1, stack: 'a b -> a*b', doc: 'Multiply numbers.' },
  { op: Op.DIV, name: 'DIV', operands: [], pop: 2, push: 1, stack: 'a b -> a/b', doc: 'Divide numbers; division by zero is a runtime error.' },
  { op: Op.MOD, name: 'MOD', operands: [], pop: 2, push: 1, stack: 'a b -> a%b', doc: 'Remainder; by zero is a runtime error.' },
  { op: Op.NEG, name: 'NEG', operands: [], pop: 1, push: 1, stack: 'a -> -a', doc: 'Negate a number.' },
  { op: Op.NOT, name: 'NOT', operands: [], pop: 1, push: 1, stack: 'a -> !a', doc: 'Logical not (null false 0 \'\' are falsy).' },
  { op: Op.EQ, name: 'EQ', operands: [], pop: 2, push: 1, stack: 'a b -> a==b', doc: 'Structural equality.' },
  { op: Op.NE, name: 'NE', operands: [], pop: 2, push: 1, stack: 'a b -> a!=b', doc: 'Structural inequality.' },
  { op: Op.LT, name: 'LT', operands: [], pop: 2, push: 1, stack: 'a b -> a<b', doc: 'Compare two numbers or two texts.' },
  { op: Op.LE, name: 'LE', operands: [], pop: 2, push: 1, stack: 'a b -> a<=b', doc: 'Compare two numbers or two texts.' },
  { op: Op.GT, name: 'GT', operands: [], pop: 2, push: 1, stack: 'a b -> a>b', doc: 'Compare two numbers or two texts.' },
  { op: Op.GE, name: 'GE', operands: [], pop: 2, push: 1, stack: 'a b -> a>=b', doc: 'Compare two numbers or two texts.' },
  { op: Op.JUMP, name: 'JUMP', operands: [target], pop: 0, push: 0, stack: '->', doc: 'Jump forward.' },
  { op: Op.JUMP_IF_FALSE, name: 'JUMP_IF_FALSE', operands: [target], pop: 1, push: 0, stack: 'c ->', doc: 'Pop; jump when falsy.' },
  { op: Op.JUMP_IF_FALSE_OR_POP, name: 'JUMP_IF_FALSE_OR_POP', operands: [target], pop: 1, push: 0, stack: 'c -> c (jump) | -> (fall through)', doc: 'For &&: keep a falsy value and jump, else pop it.' },
  { op: Op.JUMP_IF_TRUE_OR_POP, name: 'JUMP_IF_TRUE_OR_POP', operands: [target], pop: 1, push: 0, stack: 'c -> c (jump) | -> (fall through)', doc: 'For ||: keep a truthy value and jump, else pop it.' },
  { op: Op.JUMP_IF_NOT_NULL_OR_POP, name: 'JUMP_IF_NOT_NULL_OR_POP', operands: [target], pop: 1, push: 0, stack: 'c -> c (jump) | -> (fall through)', doc: 'For ??: keep a non-null value and jump, else pop it.' },
  { op: Op.LOOP, name: 'LOOP', operands: [target], pop: 0, push: 0, stack: '->', doc: 'Jump backward; costs one unit of fuel.' },
  { op: Op.ITER_INIT, name: 'ITER_INIT', operands: [], pop: 1, push: 1, stack: 'xs -> iterator', doc: 'Start iterating a list, an object (keys) or a text (characters).' },
  { op: Op.ITER_NEXT, name: 'ITER_NEXT', operands: [target], pop: 0, push: 1, stack: 'it -> it v | it -> (jump when done)', doc: 'Push the next item (list item, object key, character); when done pop the iterator and jump.' },
  { op: Op.ITER_NEXT_PAIR, name: 'ITER_NEXT_PAIR', operands: [target], pop: 0, push: 2, stack: 'it -> it k v | it -> (jump when done)', doc: 'Push the next index/key and value; when done pop the iterator and jump.' },
  { op: Op.CALL, name: 'CALL', operands: [{ name: 'ref', kind: 'ref' }, argc], pop: 'argc', push: 1, stack: 'a1 .. an -> result', doc: 'An unlinked call; the loader rewrites it into CALL_FN or CALL_NATIVE. Never executed.' },
  { op: Op.CALL_FN, name: 'CALL_FN', operands: [{ name: 'chunk', kind: 'chunk' }, argc], pop: 'argc', push: 1, stack: 'a1 .. an -> result', doc: 'Call a compiled function, guard or middleware chunk; costs one unit of fuel and one call level.' },
  { op: Op.CALL_NATIVE, name: 'CALL_NATIVE', operands: [{ name: 'native', kind: 'native' }, argc], pop: 'argc', push: 1, stack: 'a1 .. an -> result', doc: 'Call a plugin native; the VM awaits only when it returns a Promise.' },
  { op: Op.RETURN, name: 'RETURN', operands: [], pop: 1, push: 0, stack: 'v ->', doc: 'Return from the current chunk.' },
  { op: Op.TRY, name: 'TRY', operands: [{ name: 'handler', kind: 'target' }], pop: 0, push: 0, stack: '->', doc: 'Install a catch handler; a runtime error jumps to it with the error pushed.' },
  { op: Op.END_TRY, name: 'END_TRY', operands: [], pop: 0, push: 0, stack: '->', doc: 'Remove the innermost catch handler.' },
  { op: Op.FAIL, name: 'FAIL', operands: [], pop: 2, push: 0, stack: 'status message ->', doc: 'End the request with an error response (not catchable).' },
  { op: Op.RESPOND, name: 'RESPOND', operands: [], pop: 1, push: 0, stack: '{status json text html headers} ->', doc: 'The response statement: answer and end the handler.' },
  { op: Op.VALIDATE, name: 'VALIDATE', operands: [{ name: 'section', kind: 'section' }], pop: 0, push: 0, stack: '->', doc: 'Validate the body (0) or query (1) against the route schema; answers 422 on failure.' },
  { op: Op.READ_BODY, name: 'READ_BODY', operands: [], pop: 0, push: 0, stack: '->', doc: "Read and parse the request's body unless it is read already (after a route's guards, before a first use of `body` or `request.body` elsewhere); answers 400/413/415/503 when it cannot." },
  { op: Op.POW, name: 'POW', operands: [], pop: 2, push: 1, stack: 'a b -> a**b', doc: 'Raise a number to a power; an int to a non-negative int power stays exact while safe.' },
  { op: Op.JUMP_IF_NULL, name: 'JUMP_IF_NULL', operands: [target], pop: 0, push: 0, stack: 'a -> a', doc: 'For ?.: keep the value and jump when it is null (the end of the optional chain), else fall through with it.' },
  { op: Op.DUP2, name: 'DUP2', operands: [], pop: 2, push: 4, stack: 'a b -> a b a b', doc: 'Duplicate the top two values (an indexed target of a compound assignment).' },
  { op: Op.THROW, name: 'THROW', operands: [], pop: 2, push: 0, stack: 'code message ->', doc: 'Raise an error with that code and message (the throw statement); try/catch catches it.' },
  { op: Op.MAKE_LAMBDA, name: 'MAKE_LAMBDA', operands: [n, lambdaChunk], pop: 'n', push: 1, stack: 'c1 .. cn -> lambda', doc: 'Make a lambda of a lambda chunk, with copies of the n enclosing locals it reads (its slots after its parameters).' },
  { op: Op.CALL_VALUE, name: 'CALL_VALUE', operands: [argc], pop: '1+argc', push: 1, stack: 'f a1 .. an -> result', doc: 'Call the lambda f (a parameter or local); costs one unit of fuel and one call level.' },
  { op: Op.APPEND, name: 'APPEND', operands: [], pop: 2, push: 0, stack: 'xs v ->', doc: 'Append v to the list xs (a list comprehension builds its result so).' },
  { op: Op.ITER_LIST, name: 'ITER_LIST', operands: [k], pop: 1, push: 1, stack: 'xs -> iterator', doc: 'ITER_INIT for `map(xs, x => …)` and `filter(xs, x => …)` compiled inline: xs must be a list, else the type_error the native consts[k] gives.' },
];

/** Length in code units (opcode + operands) of each opcode, indexed by opcode. */
export const INSTRUCTION_SIZE: readonly number[] = OPCODES.map((o) => 1 + o.operands.length);

/** Net stack effect of one instruction on its fall-through path, given its operands. */
export function stackEffect(op: Op, operands: ArrayLike<number>): number {
  const info = OPCODES[op]!;
  let pop: number;
  switch (info.pop) {
    case 'n':
      pop = operands[0]!;
      break;
    case '2n':
      pop = 2 * operands[0]!;
      break;
    case 'argc':
      pop = operands[1]!;
      break;
    case '1+argc':
      pop = 1 + operands[0]!;
      break;
    default:
      pop = info.pop;
  }
  return info.push - pop;
}
