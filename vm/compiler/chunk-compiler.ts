/**
 * Code generation for one chunk: statements and expressions to bytecode, with locals resolved to
 * slots, constants folded, loops and try blocks wired with patched jumps, and the operand-stack
 * depth tracked for maxStack.
 */
import type { Block, CallExpr, ComprehensionExpr, Expr, IndexExpr, LambdaExpr, Literal, MemberExpr, ObjectExpr, Pos, Stmt } from '../front/ast.js';
import { ChunkEmitter, MAX_CONSTANTS } from './chunk-emitter.js';
import { namesType, shapeOf, type Reporter } from './compile-meta.js';
import { didYouMean } from '../diagnostics.js';
import { type ConstLookup, fold, shortCircuits } from './fold.js';
import type { ArgShape, CallRef, ChunkData, ChunkKind } from '../bytecode/module.js';
import { AMBIENT_NAMES, Op } from '../bytecode/opcodes.js';
import { MAX_LOCALS, Scopes } from './scope.js';
import { isTruthy, toText, typeName } from '../values.js';
import { DIAG } from '../errors.js';
import { isConstName, RESPONSE_FIELDS, thrownCodeProblem } from '../lang.js';

/**
 * Most arguments one call may pass. The VM copies arguments into the callee's slots, which are
 * bounded by MAX_LOCALS; 255 is that bound less one and the classic one-byte argument count.
 */
export const MAX_ARGS = 255;

const RESPONSE_BODY_FIELDS = ['json', 'text', 'html'];
/** The runtime's names for what the client sent: neither they nor their fields can be assigned. */
const READ_ONLY_AMBIENT: ReadonlySet<string> = new Set(['request', 'params', 'query']);

/** What a top-level name of the file is; such names are not values. */
export type TopLevelKind = 'fn' | 'guard' | 'type';

/** A loop being compiled: where `continue` goes and which `break` jumps wait for its end. */
interface LoopContext {
  /** A `for` keeps its iterator on the stack; `break` must pop it. */
  isFor: boolean;
  continueTarget: number;
  breaks: number[];
  /** Try blocks open when the loop started; those opened since are left by break/continue. */
  tryDepth: number;
  /** A `transaction` block was open when the loop started (break/continue may not leave one). */
  inTransaction: boolean;
}

/** Compiles the statements of one chunk. */
export class ChunkCompiler {
  readonly emitter = new ChunkEmitter();
  private readonly scopes = new Scopes();
  private readonly loops: LoopContext[] = [];
  private tryDepth = 0;
  /** Inside a `transaction { }` block (they do not nest). */
  private inTransaction = false;
  private reportedTooManyLocals = false;
  /** A READ_BODY was emitted unconditionally (a route's, after its guards). */
  private bodyRead = false;
  /** The sections a route validates: its `body` (0) and `query` (1) are then the validated fields. */
  private readonly validated = new Set<0 | 1>();
  /** Parameters (and a lambda's copies of them): the locals a call `f(x)` may call, as they may hold a lambda. */
  private readonly callables = new Set<string>();

  constructor(
    private readonly reporter: Reporter,
    private readonly topLevel: ReadonlyMap<string, TopLevelKind>,
    readonly kind: ChunkKind,
    /** Declaration position: where the closing NULL RETURN is attributed. */
    private readonly at: Pos,
    /** Adds a chunk to the module (a lambda's) and returns its index there. */
    private readonly addChunk: (data: ChunkData) => number,
    /** The file's constants and their values; other files' are bound at link. */
    private readonly consts: ReadonlyMap<string, Literal> = new Map(),
  ) {}

  /** What `fold` knows of names: the file's constants (locals are never named in capitals). */
  private readonly constants: ConstLookup = (name) => (this.consts.has(name) ? { value: this.consts.get(name)! } : null);

  /** Declares the parameters in slots 0..n-1. */
  params(params: readonly { name: string; line: number; col: number }[]): void {
    // Duplicate parameters are the parser's diagnostic (E_DUPLICATE_PARAM).
    for (const p of params) {
      this.declare(p.name, p);
      this.callables.add(p.name);
    }
    if (params.length > MAX_ARGS) this.reporter.error(DIAG.E_TOO_MANY_ARGS, `more than ${MAX_ARGS} parameters`, params[MAX_ARGS]!);
  }

  /** Compiles top-level statements of the chunk (in the chunk's outermost scope). */
  statements(body: readonly Stmt[]): void {
    for (const stmt of body) this.stmt(stmt);
  }

  /** Ends the chunk with NULL; RETURN and freezes it. */
  finish(name: string, arity: number): ChunkData {
    this.emitter.emit(Op.NULL, [], this.at);
    this.emitter.emit(Op.RETURN, [], this.at);
    return this.seal(name, arity);
  }

  /** Freezes the chunk, whose code ends in a RETURN. */
  private seal(name: string, arity: number): ChunkData {
    if (this.emitter.constantsOverflowed) {
      this.reporter.error(DIAG.E_TOO_MANY_CONSTANTS, `${name} needs more than ${MAX_CONSTANTS} constants`, this.at);
    }
    return this.emitter.finish(name, this.kind, arity, this.scopes.maxSlots);
  }

  /** Emits the call of one route guard: constant args, CALL with a guard ref, POP. */
  guardCall(ref: Omit<CallRef, 'kind' | 'argc'>, args: readonly Literal[], at: Pos): void {
    if (args.length > MAX_ARGS) this.reporter.error(DIAG.E_TOO_MANY_ARGS, `more than ${MAX_ARGS} arguments`, at);
    for (const arg of args) this.literal(arg, at);
    const index = this.emitter.ref({ ...ref, kind: 'guard', argc: args.length });
    this.emitter.emit(Op.CALL, [index, args.length], at);
    this.emitter.emit(Op.POP, [], at);
  }

  /** Emits READ_BODY; later uses of the body in this chunk need no read of their own. */
  readBody(at: Pos): void {
    this.emitter.emit(Op.READ_BODY, [], at);
    this.bodyRead = true;
  }

  /** Before a use of `body` or `request.body` that may come before the route's READ_BODY. */
  private needBody(at: Pos): void {
    if (!this.bodyRead) this.emitter.emit(Op.READ_BODY, [], at);
  }

  /** Emits VALIDATE for the body (0) or query (1) section. */
  validate(section: 0 | 1, at: Pos): void {
    this.emitter.emit(Op.VALIDATE, [section], at);
    this.validated.add(section);
  }

  // -------------------------------------------------------------------------------------------
  // Statements

  private declare(name: string, at: Pos): number {
    const slot = this.scopes.declare(name);
    if (slot >= MAX_LOCALS && !this.reportedTooManyLocals) {
      this.reportedTooManyLocals = true;
      this.reporter.error(DIAG.E_TOO_MANY_LOCALS, `more than ${MAX_LOCALS} local variables are live at once`, at, { length: name.length });
    }
    return slot;
  }

  /** Declares a loop variable or catch name; ambient names and names in capitals cannot be bound. */
  private declareBinding(name: string, at: Pos): number {
    if (this.isAmbient(name)) this.ambientAssigned(name, at, undefined);
    if (isConstName(name)) this.constAssigned(name, at);
    return this.declare(name, at);
  }

  /** `MAX = 1`: a name in capitals is a constant's, this file's or another's, and never a variable. */
  private constAssigned(name: string, at: Pos): void {
    const what = this.consts.has(name)
      ? `'${name}' is a constant and cannot be assigned`
      : `'${name}' is named in capitals, as constants are, and cannot be assigned`;
    this.reporter.error(DIAG.E_CONST, what, at, { length: name.length, hint: `a variable's name has a lower-case letter: ${name.toLowerCase()} = …` });
  }

  private block(block: Block): void {
    this.scopes.push();
    this.statements(block.body);
    this.scopes.pop();
  }

  /** Emits an unconditional transfer; the code after it is unreachable, so the depth resets. */
  private transfer(emit: () => void): void {
    const depth = this.emitter.depth;
    emit();
    this.emitter.depth = depth;
  }

  private stmt(stmt: Stmt): void {
    switch (stmt.kind) {
      case 'ExprStmt':
        this.expr(stmt.expr);
        this.emitter.emit(Op.POP, [], stmt);
        return;
      case 'Assign':
        return this.assign(stmt);
      case 'If':
        return this.ifStmt(stmt);
      case 'While':
        return this.whileStmt(stmt);
      case 'For':
        return this.forStmt(stmt);
      case 'Break':
      case 'Continue':
        return this.jumpOut(stmt);
      case 'Return':
        if (this.kind !== 'fn' && this.kind !== 'guard') {
          this.reporter.error(DIAG.E_RETURN_OUTSIDE_FN, `'return' is only allowed in a fn or guard_definition`, stmt, { length: 6 });
        } else if (this.inTransaction) {
          this.reporter.error(DIAG.E_TRANSACTION, `'return' cannot leave a transaction block`, stmt, {
            length: 6,
            hint: 'keep the result in a variable and return after the block',
          });
        }
        this.transfer(() => {
          if (stmt.value) this.expr(stmt.value);
          else this.emitter.emit(Op.NULL, [], stmt);
          this.emitter.emit(Op.RETURN, [], stmt);
        });
        return;
      case 'Fail':
        this.transfer(() => {
          this.expr(stmt.status);
          if (stmt.message) this.expr(stmt.message);
          else this.emitter.emit(Op.NULL, [], stmt);
          this.emitter.emit(Op.FAIL, [], stmt);
        });
        return;
      case 'Throw':
        this.checkThrownCode(stmt.code);
        this.transfer(() => {
          this.expr(stmt.code);
          if (stmt.message) this.expr(stmt.message);
          else this.emitter.emit(Op.NULL, [], stmt);
          this.emitter.emit(Op.THROW, [], stmt);
        });
        return;
      case 'Save':
      case 'Delete':
        this.expr(stmt.record);
        this.recordStep(stmt.kind === 'Save' ? 'save' : 'delete', 1, stmt);
        return;
      case 'Try':
        return this.tryStmt(stmt);
      case 'Transaction':
        return this.transactionStmt(stmt);
      case 'Response':
        this.checkResponseFields(stmt.fields);
        this.answerOutsideTransaction('response { }', stmt);
        this.transfer(() => {
          this.expr(stmt.fields);
          this.emitter.emit(Op.RESPOND, [], stmt);
        });
        return;
    }
  }

  /**
   * `target = value`, and `target op= value`: the target's object and index are evaluated once
   * (DUP/DUP2 keep them for the write), its current value read, then the operator applied as
   * the binary operator does.
   */
  private assign(stmt: Stmt & { kind: 'Assign' }): void {
    const target = stmt.target;
    const value = () => {
      this.expr(stmt.value);
      if (stmt.op !== null) this.emitter.emit(BINARY_OPS[stmt.op], [], stmt);
    };
    switch (target.kind) {
      case 'Name': {
        let slot = this.scopes.lookup(target.name);
        if (stmt.op !== null) {
          if (slot === undefined) this.compoundOnUndeclared(stmt, target.name);
          else this.emitter.emit(Op.LOAD_LOCAL, [slot], target);
        }
        value();
        if (slot === undefined && isConstName(target.name)) {
          // Reported, and no local made: later uses still mean the constant.
          this.constAssigned(target.name, target);
          this.emitter.emit(Op.POP, [], stmt);
          return;
        }
        if (slot === undefined) {
          if (this.isAmbient(target.name)) this.ambientAssigned(target.name, target, target.name.length);
          slot = this.declare(target.name, target);
        }
        this.emitter.emit(Op.STORE_LOCAL, [slot], stmt);
        return;
      }
      case 'Member': {
        this.checkRequestData(target);
        this.expr(target.object);
        const name = this.emitter.constant(target.name);
        if (stmt.op !== null) {
          this.emitter.emit(Op.DUP, [], target);
          this.emitter.emit(Op.GET_FIELD, [name], target);
        }
        value();
        this.emitter.emit(Op.SET_FIELD, [name], target);
        return;
      }
      case 'Index':
        this.checkRequestData(target);
        this.expr(target.object);
        this.expr(target.index);
        if (stmt.op !== null) {
          this.emitter.emit(Op.DUP2, [], target);
          this.emitter.emit(Op.GET_INDEX, [], target);
        }
        value();
        this.emitter.emit(Op.SET_INDEX, [], target);
        return;
    }
  }

  /** A constant code is checked here rather than at run time (THROW checks the others). */
  private checkThrownCode(code: Expr): void {
    const folded = fold(code, this.constants);
    if (!folded) return;
    const problem = typeof folded.value === 'string' ? thrownCodeProblem(folded.value) : `a thrown code is a text, not ${typeName(folded.value)}`;
    if (problem !== null) this.reporter.error(DIAG.E_THROW_CODE, problem, code, { hint: "write throw 'out_of_stock', 'Only 2 left'" });
  }

  /** `total += x` before any `total = …`: there is no value to add to (an ambient name is reported as assigned). */
  private compoundOnUndeclared(stmt: Stmt & { kind: 'Assign' }, name: string): void {
    if (!this.isAmbient(name) && !isConstName(name)) {
      const near = didYouMean(name, this.scopes.visible());
      this.reporter.error(DIAG.E_UNDEFINED_NAME, `'${name}' is not defined here, so '${stmt.op}=' has no value to start from`, stmt.target, {
        length: name.length,
        hint: near ?? `give it a first value: ${name} = ${stmt.op === '*' || stmt.op === '/' ? 1 : 0}`,
      });
    }
    this.emitter.emit(Op.NULL, [], stmt.target);
  }

  private ifStmt(stmt: Stmt & { kind: 'If' }): void {
    this.expr(stmt.cond);
    const toElse = this.emitter.emitJump(Op.JUMP_IF_FALSE, stmt);
    this.block(stmt.then);
    if (stmt.otherwise === null) {
      this.emitter.patch(toElse);
      return;
    }
    const toEnd = this.emitter.emitJump(Op.JUMP, stmt);
    this.emitter.patch(toElse);
    if (stmt.otherwise.kind === 'If') this.ifStmt(stmt.otherwise);
    else this.block(stmt.otherwise);
    this.emitter.patch(toEnd);
  }

  private whileStmt(stmt: Stmt & { kind: 'While' }): void {
    const top = this.emitter.here();
    this.expr(stmt.cond);
    const toEnd = this.emitter.emitJump(Op.JUMP_IF_FALSE, stmt);
    const loop: LoopContext = { isFor: false, continueTarget: top, breaks: [], tryDepth: this.tryDepth, inTransaction: this.inTransaction };
    this.loops.push(loop);
    this.block(stmt.body);
    this.loops.pop();
    this.emitter.emit(Op.LOOP, [top], stmt);
    this.emitter.patch(toEnd);
    for (const at of loop.breaks) this.emitter.patch(at);
  }

  private forStmt(stmt: Stmt & { kind: 'For' }): void {
    const base = this.emitter.depth;
    this.expr(stmt.iterable);
    this.emitter.emit(Op.ITER_INIT, [], stmt.iterable);
    const top = this.emitter.here();
    const toEnd = this.emitter.emitJump(stmt.key === null ? Op.ITER_NEXT : Op.ITER_NEXT_PAIR, stmt);
    this.scopes.push();
    if (stmt.key !== null) {
      const keySlot = this.declareBinding(stmt.key, stmt);
      const valueSlot = this.declareBinding(stmt.value, stmt);
      // ITER_NEXT_PAIR leaves the value on top, so it is stored first.
      this.emitter.emit(Op.STORE_LOCAL, [valueSlot], stmt);
      this.emitter.emit(Op.STORE_LOCAL, [keySlot], stmt);
    } else {
      this.emitter.emit(Op.STORE_LOCAL, [this.declareBinding(stmt.value, stmt)], stmt);
    }
    const loop: LoopContext = { isFor: true, continueTarget: top, breaks: [], tryDepth: this.tryDepth, inTransaction: this.inTransaction };
    this.loops.push(loop);
    this.statements(stmt.body.body);
    this.loops.pop();
    this.scopes.pop();
    this.emitter.emit(Op.LOOP, [top], stmt);
    // Both ways out (ITER_NEXT done, break after its POP) meet here with the iterator gone.
    this.emitter.patch(toEnd);
    for (const at of loop.breaks) this.emitter.patch(at);
    this.emitter.depth = base;
  }

  private jumpOut(stmt: Stmt & { kind: 'Break' | 'Continue' }): void {
    const loop = this.loops[this.loops.length - 1];
    const word = stmt.kind === 'Break' ? 'break' : 'continue';
    if (!loop) {
      this.reporter.error(DIAG.E_BREAK_OUTSIDE_LOOP, `'${word}' outside a loop`, stmt, { length: word.length });
      return;
    }
    if (this.inTransaction && !loop.inTransaction) {
      this.reporter.error(DIAG.E_TRANSACTION, `'${word}' cannot leave a transaction block`, stmt, { length: word.length });
    }
    this.transfer(() => {
      for (let i = loop.tryDepth; i < this.tryDepth; i++) this.emitter.emit(Op.END_TRY, [], stmt);
      if (stmt.kind === 'Continue') {
        this.emitter.emit(Op.LOOP, [loop.continueTarget], stmt);
        return;
      }
      if (loop.isFor) this.emitter.emit(Op.POP, [], stmt);
      loop.breaks.push(this.emitter.emitJump(Op.JUMP, stmt));
    });
  }

  private tryStmt(stmt: Stmt & { kind: 'Try' }): void {
    const depth = this.emitter.depth;
    const toHandler = this.emitter.emitJump(Op.TRY, stmt);
    this.tryDepth++;
    this.block(stmt.body);
    this.tryDepth--;
    this.emitter.emit(Op.END_TRY, [], stmt);
    const toEnd = this.emitter.emitJump(Op.JUMP, stmt);
    this.emitter.patch(toHandler);
    // The VM enters the handler with the stack as it was at TRY plus the error value.
    this.emitter.setDepth(depth + 1);
    this.scopes.push();
    this.emitter.emit(Op.STORE_LOCAL, [this.declareBinding(stmt.errName, stmt)], stmt);
    this.statements(stmt.handler.body);
    this.scopes.pop();
    this.emitter.patch(toEnd);
  }

  /**
   * `transaction { body }`: begin; the body under a handler; commit. A raise in the body rolls
   * back and raises again (the rollback step rethrows the error it is given). A request that ends
   * inside the block (`fail`, a fn that answers, a limit) is rolled back by the provider when the
   * request ends.
   */
  private transactionStmt(stmt: Stmt & { kind: 'Transaction' }): void {
    if (this.inTransaction) {
      this.reporter.error(DIAG.E_TRANSACTION, 'a transaction block cannot be nested in another', stmt, {
        length: 11,
        hint: 'the outer block already makes its statements one transaction',
      });
    }
    this.recordStep('transaction.begin', 0, stmt);
    const depth = this.emitter.depth;
    const toHandler = this.emitter.emitJump(Op.TRY, stmt);
    const outer = this.inTransaction;
    this.inTransaction = true;
    this.tryDepth++;
    this.block(stmt.body);
    this.tryDepth--;
    this.inTransaction = outer;
    this.emitter.emit(Op.END_TRY, [], stmt);
    this.recordStep('transaction.commit', 0, stmt);
    const toEnd = this.emitter.emitJump(Op.JUMP, stmt);
    this.emitter.patch(toHandler);
    // The handler starts with the error value on the stack, which the rollback step takes.
    this.emitter.setDepth(depth + 1);
    this.recordStep('transaction.rollback', 1, stmt);
    this.emitter.patch(toEnd);
  }

  /** Emits one step the record provider answers (`save`, `transaction.begin`…) and drops its value. */
  private recordStep(name: string, argc: number, at: Pos): void {
    const index = this.emitter.ref({ name, kind: 'record', argc, line: at.line, col: at.col });
    this.emitter.emit(Op.CALL, [index, argc], at);
    this.emitter.emit(Op.POP, [], at);
  }

  /** An answer written inside a transaction block would be sent before the block commits: refused. */
  private answerOutsideTransaction(what: string, at: Pos): void {
    if (!this.inTransaction) return;
    this.reporter.error(DIAG.E_TRANSACTION, `${what} inside a transaction block would answer before it commits`, at, {
      hint: "answer after the block; 'fail' inside it rolls the block back",
    });
  }

  private checkResponseFields(fields: ObjectExpr): void {
    let bodies = 0;
    for (const entry of fields.entries) {
      if (!RESPONSE_FIELDS.includes(entry.key)) {
        this.reporter.error(DIAG.E_BAD_RESPONSE_FIELD, `unknown response field '${entry.key}'`, entry, {
          hint: didYouMean(entry.key, RESPONSE_FIELDS) ?? `response fields are ${RESPONSE_FIELDS.join(', ')}`,
          length: entry.key.length,
        });
      } else if (RESPONSE_BODY_FIELDS.includes(entry.key) && ++bodies === 2) {
        this.reporter.error(DIAG.E_BAD_RESPONSE_FIELD, 'a response has at most one of json, text and html', entry, { length: entry.key.length });
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Expressions

  /**
   * `request.x = …`, `params.id = …`, `query['page'] = …`, and deeper (`request.headers.a = …`):
   * what the client sent is read-only; changing it would make later code (and the log) lie about
   * the request. `body` stays writable: it is the route's own, validated copy.
   */
  private checkRequestData(target: Expr & { kind: 'Member' | 'Index' }): void {
    let root: Expr = target;
    while (root.kind === 'Member' || root.kind === 'Index') root = root.object;
    if (root.kind !== 'Name' || !READ_ONLY_AMBIENT.has(root.name) || this.scopes.lookup(root.name) !== undefined) return;
    this.reporter.error(DIAG.E_ASSIGN_AMBIENT, `'${root.name}' holds what the client sent and cannot be changed`, target, {
      hint: 'copy what you need into a local first: page = query.page',
    });
  }

  /** `body = …`, `for request in …`: the runtime's names stay bound to the request's values; `length` underlines the name. */
  private ambientAssigned(name: string, at: Pos, length: number | undefined): void {
    if (name === 'state') {
      // The one object is what middleware, guards and the handler share: replacing it would hand later code another.
      this.reporter.error(DIAG.E_ASSIGN_AMBIENT, "'state' is the request's shared object and cannot be replaced", at, {
        length,
        hint: 'set a field of it instead: state.user = auth_user()',
      });
      return;
    }
    this.reporter.error(DIAG.E_ASSIGN_AMBIENT, `'${name}' is provided by the runtime and cannot be assigned`, at, { length });
  }

  private isAmbient(name: string): boolean {
    return (AMBIENT_NAMES as readonly string[]).includes(name);
  }

  private literal(value: Literal, at: Pos): void {
    if (value === null) this.emitter.emit(Op.NULL, [], at);
    else if (value === true) this.emitter.emit(Op.TRUE, [], at);
    else if (value === false) this.emitter.emit(Op.FALSE, [], at);
    else this.emitter.emit(Op.CONST, [this.emitter.constant(value)], at);
  }

  /** Emits code leaving the value of `expr` on the stack. */
  expr(expr: Expr): void {
    switch (expr.kind) {
      case 'Literal':
        return this.literal(expr.value, expr);
      case 'Unary':
      case 'Binary':
      case 'Template': {
        const folded = fold(expr, this.constants);
        if (folded) return this.literal(folded.value, expr);
        break;
      }
    }
    switch (expr.kind) {
      case 'Template':
        return this.template(expr);
      case 'List':
        for (const item of expr.items) this.expr(item);
        this.emitter.emit(Op.LIST, [expr.items.length], expr);
        return;
      case 'Object':
        for (const entry of expr.entries) {
          this.emitter.emit(Op.CONST, [this.emitter.constant(entry.key)], entry);
          this.expr(entry.value);
        }
        this.emitter.emit(Op.OBJECT, [expr.entries.length], expr);
        return;
      case 'Name':
        return this.name(expr);
      case 'Unary':
        this.expr(expr.operand);
        this.emitter.emit(expr.op === '-' ? Op.NEG : Op.NOT, [], expr);
        return;
      case 'Binary':
        this.expr(expr.left);
        this.expr(expr.right);
        this.emitter.emit(BINARY_OPS[expr.op], [], expr);
        return;
      case 'Logical':
        return this.logical(expr);
      case 'Conditional':
        return this.conditional(expr);
      case 'Member':
      case 'Index': {
        if (!expr.optional && !expr.chained) return this.access(expr, []);
        // Every `?.` of the chain jumps to its end with the null it found.
        const toEnd: number[] = [];
        this.access(expr, toEnd);
        for (const at of toEnd) this.emitter.patch(at);
        return;
      }
      case 'Call':
        return this.call(expr);
      case 'Comprehension':
        return this.comprehension(expr);
      case 'Lambda':
        this.reporter.error(DIAG.E_LAMBDA_PLACE, 'a lambda can only be an argument of a call', expr, {
          hint: 'pass it where it is used: map(xs, x => x * 2); or write a fn',
        });
        this.emitter.emit(Op.NULL, [], expr);
        return;
    }
  }

  /** An argument: a lambda is allowed here, and only here. */
  private argument(arg: Expr): void {
    if (arg.kind === 'Lambda') this.lambda(arg);
    else this.expr(arg);
  }

  /**
   * A lambda: its body is a chunk of its own whose slots are its parameters, then copies of the
   * enclosing locals it names (spec/language.md: captured by value when it is made). Every name in
   * the body that is a local here is copied, even one a comprehension inside shadows: unused, harmless.
   */
  private lambda(expr: LambdaExpr): void {
    const inner = new ChunkCompiler(this.reporter, this.topLevel, 'lambda', expr.body, this.addChunk, this.consts);
    inner.bodyRead = this.bodyRead;
    for (const section of this.validated) inner.validated.add(section);
    inner.params(expr.params);
    const own = new Set(expr.params.map((p) => p.name));
    const captured = [...namesIn(expr.body)].filter((name) => !own.has(name) && this.scopes.lookup(name) !== undefined);
    for (const name of captured) {
      inner.declare(name, expr);
      if (this.callables.has(name)) inner.callables.add(name);
    }
    inner.expr(expr.body);
    inner.emitter.emit(Op.RETURN, [], expr.body);
    const index = this.addChunk(inner.seal(`lambda at ${expr.line}:${expr.col}`, expr.params.length));
    for (const name of captured) this.emitter.emit(Op.LOAD_LOCAL, [this.scopes.lookup(name)!], expr);
    this.emitter.emit(Op.MAKE_LAMBDA, [captured.length, index], expr);
  }

  /**
   * `[item for k, v in xs if cond]`: a for loop appending to a list held in a slot of its own.
   * `listOf` names the native it stands for (`map`, `filter`), whose xs must be a list.
   */
  private comprehension(expr: ComprehensionExpr, listOf: string | null = null): void {
    const base = this.emitter.depth;
    this.scopes.push();
    // A name no source can spell, so the code never sees it.
    const result = this.declare('[comprehension]', expr);
    this.emitter.emit(Op.LIST, [0], expr);
    this.emitter.emit(Op.STORE_LOCAL, [result], expr);
    this.expr(expr.iterable);
    if (listOf === null) this.emitter.emit(Op.ITER_INIT, [], expr.iterable);
    else this.emitter.emit(Op.ITER_LIST, [this.emitter.constant(listOf)], expr.iterable);
    const top = this.emitter.here();
    const toEnd = this.emitter.emitJump(expr.key === null ? Op.ITER_NEXT : Op.ITER_NEXT_PAIR, expr);
    this.emitter.emit(Op.STORE_LOCAL, [this.declareBinding(expr.value, expr)], expr);
    if (expr.key !== null) this.emitter.emit(Op.STORE_LOCAL, [this.declareBinding(expr.key, expr)], expr);
    let toNext: number | null = null;
    if (expr.cond !== null) {
      this.expr(expr.cond);
      toNext = this.emitter.emitJump(Op.JUMP_IF_FALSE, expr.cond);
    }
    this.emitter.emit(Op.LOAD_LOCAL, [result], expr.item);
    this.expr(expr.item);
    this.emitter.emit(Op.APPEND, [], expr.item);
    if (toNext !== null) this.emitter.patch(toNext);
    this.emitter.emit(Op.LOOP, [top], expr);
    this.emitter.patch(toEnd);
    this.emitter.depth = base;
    this.emitter.emit(Op.LOAD_LOCAL, [result], expr);
    this.scopes.pop();
  }

  /** Text parts and folded interpolations are merged into as few constants as possible. */
  private template(expr: Expr & { kind: 'Template' }): void {
    let text = '';
    let count = 0;
    const flush = () => {
      if (text === '') return;
      this.emitter.emit(Op.CONST, [this.emitter.constant(text)], expr);
      text = '';
      count++;
    };
    for (const part of expr.parts) {
      if (typeof part === 'string') {
        text += part;
        continue;
      }
      const folded = fold(part, this.constants);
      if (folded) {
        text += toText(folded.value);
        continue;
      }
      flush();
      this.expr(part);
      count++;
    }
    flush();
    this.emitter.emit(Op.TEMPLATE, [count], expr);
  }

  /** One link of a postfix chain: its object (the chain's earlier links), a null test for `?.`, the read. */
  private access(expr: MemberExpr | IndexExpr, toEnd: number[]): void {
    const object = expr.object;
    const key = expr.kind === 'Member' ? expr.name : expr.index.kind === 'Literal' ? expr.index.value : null;
    if (key === 'body' && isRequest(object)) this.needBody(expr);
    if (expr.chained && (object.kind === 'Member' || object.kind === 'Index')) this.access(object, toEnd);
    else this.expr(object);
    if (expr.optional) toEnd.push(this.emitter.emitJump(Op.JUMP_IF_NULL, expr));
    if (expr.kind === 'Member') {
      this.emitter.emit(Op.GET_FIELD, [this.emitter.constant(expr.name)], expr);
      return;
    }
    this.expr(expr.index);
    this.emitter.emit(Op.GET_INDEX, [], expr);
  }

  /** `c ? a : b`: a constant condition compiles only its branch. */
  private conditional(expr: Expr & { kind: 'Conditional' }): void {
    const cond = fold(expr.cond, this.constants);
    if (cond) return this.expr(isTruthy(cond.value) ? expr.then : expr.otherwise);
    this.expr(expr.cond);
    const toElse = this.emitter.emitJump(Op.JUMP_IF_FALSE, expr);
    const depth = this.emitter.depth;
    this.expr(expr.then);
    const toEnd = this.emitter.emitJump(Op.JUMP, expr);
    this.emitter.patch(toElse);
    this.emitter.depth = depth;
    this.expr(expr.otherwise);
    this.emitter.patch(toEnd);
  }

  private logical(expr: Expr & { kind: 'Logical' }): void {
    const left = fold(expr.left, this.constants);
    if (left) {
      // A constant left side decides statically whether the right side is the result.
      if (shortCircuits(expr.op, left.value)) this.literal(left.value, expr.left);
      else this.expr(expr.right);
      return;
    }
    this.expr(expr.left);
    const op = expr.op === '&&' ? Op.JUMP_IF_FALSE_OR_POP : expr.op === '||' ? Op.JUMP_IF_TRUE_OR_POP : Op.JUMP_IF_NOT_NULL_OR_POP;
    const toEnd = this.emitter.emitJump(op, expr);
    this.expr(expr.right);
    this.emitter.patch(toEnd);
  }

  private name(expr: Expr & { kind: 'Name' }): void {
    const slot = this.scopes.lookup(expr.name);
    if (slot !== undefined) {
      this.emitter.emit(Op.LOAD_LOCAL, [slot], expr);
      return;
    }
    const ambient = (AMBIENT_NAMES as readonly string[]).indexOf(expr.name);
    if (ambient >= 0) {
      if (expr.name === 'body') this.needBody(expr);
      this.emitter.emit(Op.LOAD_AMBIENT, [ambient], expr);
      return;
    }
    if (this.consts.has(expr.name)) return this.literal(this.consts.get(expr.name)!, expr);
    const length = expr.name.length;
    const top = this.topLevel.get(expr.name);
    if (top === undefined && isConstName(expr.name)) {
      // Another file's constant: the linker binds the reference to its value (or reports it unknown).
      const index = this.emitter.ref({ name: expr.name, kind: 'const', argc: 0, line: expr.line, col: expr.col });
      this.emitter.emit(Op.CALL, [index, 0], expr);
      return;
    }
    if (top !== undefined) {
      const what = top === 'guard' ? 'guard_definition' : top;
      const hint = top === 'type' ? `use ${expr.name}.create(...) or ${expr.name}.find(...)` : `call it: ${expr.name}(...)`;
      this.reporter.error(DIAG.E_NOT_A_VALUE, `'${expr.name}' is a ${what}, not a value`, expr, { hint, length });
    } else {
      const hint = didYouMean(expr.name, [...this.scopes.visible(), ...AMBIENT_NAMES]);
      this.reporter.error(DIAG.E_UNDEFINED_NAME, `'${expr.name}' is not defined here`, expr, { hint, length });
    }
    this.emitter.emit(Op.NULL, [], expr);
  }

  private call(expr: CallExpr): void {
    if (expr.callee.kind === 'Name' && this.callables.has(expr.callee.name) && this.scopes.lookup(expr.callee.name) !== undefined) {
      if (expr.args.length > MAX_ARGS) this.reporter.error(DIAG.E_TOO_MANY_ARGS, `more than ${MAX_ARGS} arguments`, expr.args[MAX_ARGS]!);
      this.name(expr.callee);
      for (const arg of expr.args) this.argument(arg);
      this.emitter.emit(Op.CALL_VALUE, [expr.args.length], expr);
      return;
    }
    const name = this.calleeName(expr.callee);
    const inline = name === null ? null : inlined(name, expr);
    if (inline !== null) return this.comprehension(inline, name);
    if (expr.args.length > MAX_ARGS) this.reporter.error(DIAG.E_TOO_MANY_ARGS, `more than ${MAX_ARGS} arguments`, expr.args[MAX_ARGS]!);
    if (name === null) {
      this.reporter.error(DIAG.E_NOT_CALLABLE, 'only a function name or Name.method can be called', expr.callee);
      // No call reference: the linker would only report the nameless call again.
      for (const arg of expr.args) {
        this.expr(arg);
        this.emitter.emit(Op.POP, [], expr);
      }
      this.emitter.emit(Op.NULL, [], expr);
      return;
    }
    for (const arg of expr.args) this.argument(arg);
    if (expr.callee.kind === 'Member' && expr.callee.object.kind === 'Name' && expr.callee.object.name === 'response') {
      this.answerOutsideTransaction(`${name}()`, expr);
    }
    // What is known of `Type.method(...)` arguments lets the linker check record filters and options.
    const object = expr.callee.kind === 'Member' && expr.callee.object.kind === 'Name' ? expr.callee.object.name : null;
    const typeLike = object !== null && namesType(object, this.topLevel.get(object) === 'type');
    const shapes = typeLike && expr.args.length > 0 ? expr.args.map((a) => shapeOf(a, this.rawRequest)) : null;
    const lambdas = expr.args.flatMap((a, i): [number, number][] => (a.kind === 'Lambda' ? [[i, a.params.length]] : []));
    this.emitCall(name, expr.args.length, expr, shapes?.some((s) => s.k !== 'u') ? shapes : undefined, lambdas);
  }

  /**
   * How the code names the request's data as the client sent it, when `expr` is that data whole:
   * `request.body` (`.query`, `.params`, `.headers`, `.cookies`, or indexed), and in a route the
   * ambient `params`, and `body` and `query` unless the route validates them. Null otherwise
   * (a fn or middleware cannot tell whether its `body` was validated: the run time checks it).
   */
  private readonly rawRequest = (expr: Expr): string | null => {
    if (expr.kind === 'Member' && isRequest(expr.object)) return RAW_REQUEST_FIELDS.has(expr.name) ? `request.${expr.name}` : null;
    if (expr.kind === 'Index' && isRequest(expr.object) && expr.index.kind === 'Literal' && typeof expr.index.value === 'string') {
      return RAW_REQUEST_FIELDS.has(expr.index.value) ? `request.${expr.index.value}` : null;
    }
    if (expr.kind !== 'Name' || this.kind !== 'route' || this.scopes.lookup(expr.name) !== undefined) return null;
    if (expr.name === 'params' || (expr.name === 'body' && !this.validated.has(0)) || (expr.name === 'query' && !this.validated.has(1))) return expr.name;
    return null;
  };

  /** `f` or `X.m` for a callable callee whose names are not locals; null for anything else. */
  private calleeName(callee: Expr): string | null {
    if ((callee.kind === 'Member' || callee.kind === 'Index') && (callee.optional || callee.chained)) return null;
    if (callee.kind === 'Name') return this.scopes.lookup(callee.name) === undefined ? callee.name : null;
    if (callee.kind === 'Member' && callee.object.kind === 'Name' && this.scopes.lookup(callee.object.name) === undefined) {
      return `${callee.object.name}.${callee.name}`;
    }
    return null;
  }

  private emitCall(name: string, argc: number, at: Pos, args?: ArgShape[], lambdas: [number, number][] = []): void {
    const ref: CallRef = { name, kind: 'call', argc, line: at.line, col: at.col };
    if (args !== undefined) ref.args = args;
    if (lambdas.length > 0) ref.lambdas = lambdas;
    const index = this.emitter.ref(ref);
    this.emitter.emit(Op.CALL, [index, argc], at);
  }
}

/** The fields of `request` that hold the client's data as it came. */
const RAW_REQUEST_FIELDS: ReadonlySet<string> = new Set(['body', 'query', 'params', 'headers', 'cookies']);

const BINARY_OPS = {
  '+': Op.ADD,
  '-': Op.SUB,
  '*': Op.MUL,
  '/': Op.DIV,
  '%': Op.MOD,
  '**': Op.POW,
  '==': Op.EQ,
  '!=': Op.NE,
  '<': Op.LT,
  '<=': Op.LE,
  '>': Op.GT,
  '>=': Op.GE,
} as const;

/**
 * `map(xs, x => e)` as `[e for x in xs]` and `filter(xs, x => c)` as `[x for x in xs if c]`: the
 * same values, errors and fuel as the natives (spec/natives.md), without a call per item. Null
 * for any other call.
 */
function inlined(name: string, call: CallExpr): ComprehensionExpr | null {
  const [xs, f] = call.args;
  if ((name !== 'map' && name !== 'filter') || call.args.length !== 2 || f?.kind !== 'Lambda' || f.params.length !== 1) return null;
  const param = f.params[0]!;
  const item: Expr = name === 'map' ? f.body : { kind: 'Name', name: param.name, line: param.line, col: param.col };
  return { kind: 'Comprehension', item, key: null, value: param.name, iterable: xs!, cond: name === 'filter' ? f.body : null, line: call.line, col: call.col };
}

/** Every name an expression mentions, at any depth (nodes are plain objects: new kinds need no case here). */
function namesIn(expr: Expr): Set<string> {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) for (const item of node) visit(item);
    else if (node !== null && typeof node === 'object') {
      if ((node as Expr).kind === 'Name') names.add((node as Expr & { kind: 'Name' }).name);
      else for (const child of Object.values(node)) visit(child);
    }
  };
  visit(expr);
  return names;
}

/** The ambient `request` (ambient names cannot be rebound, so the name always means it). */
function isRequest(expr: Expr): boolean {
  return expr.kind === 'Name' && expr.name === 'request';
}
