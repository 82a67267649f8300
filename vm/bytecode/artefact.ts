/**
 * One compiled module ⇄ bytes. An artefact is a sequence of msgpack values:
 *
 *     magic · format · digest · header · body
 *
 * `magic` and `format` come first so a foreign file or another format version is recognised
 * before anything else is decoded (Lua's `lundump.c` habit); `digest` is the sha256 of every byte
 * after it, so a damaged file is refused before its structure is trusted. The decoded body is
 * then checked by the verifier (verify.ts) before anything uses it.
 * spec/bytecode.md describes the layout (tools/gen-bytecode-doc.ts writes it).
 */
import { createHash } from 'node:crypto';
import { ARTEFACT_MAGIC, BUNDLE_MAGIC, FORMAT_VERSION, type CallableMeta, type CompiledModule } from './module.js';
import { ARTEFACT } from '../errors.js';
import { ArtefactError, int32Bytes, loadCodec, pack, unpack, unpackChunk, unpackOnFirstRead, type ArtefactErrorCode } from './codec.js';
import { readModule, record } from './verify.js';

/** Bytes of the sha256 digest stored after the format. */
const DIGEST_BYTES = 32;

const signatures = new Map<string, Uint8Array>();

/** The first bytes of every file with this magic: the msgpack encoding of the magic string. */
function signature(magic: string): Uint8Array {
  let sig = signatures.get(magic);
  if (!sig) signatures.set(magic, (sig = Uint8Array.from(pack(magic))));
  return sig;
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/** What a file holds, judged by its first bytes: a module artefact, a bundle, or neither. */
export function sniffArtefact(bytes: Uint8Array): 'module' | 'bundle' | null {
  if (startsWith(bytes, signature(ARTEFACT_MAGIC))) return 'module';
  if (startsWith(bytes, signature(BUNDLE_MAGIC))) return 'bundle';
  return null;
}

function sha256(bytes: Uint8Array): Buffer {
  return createHash('sha256').update(bytes).digest();
}

function concat(parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(Buffer.concat(parts));
}

/** Encodes `header` and `body` behind `magic`, the format version and a digest. */
export function encodeEnvelope(magic: string, header: unknown, body: unknown): Uint8Array {
  const rest = concat([pack(header), pack(body)]);
  return concat([signature(magic), pack(FORMAT_VERSION), pack(sha256(rest)), rest]);
}

/**
 * Checks magic, format and digest and returns the still-unvalidated header and body.
 * `what` names the kind of file in messages ("module artefact", "bundle").
 */
export function decodeEnvelope(bytes: Uint8Array, magic: string, what: string, file?: string): { header: unknown; body: unknown } {
  const fail = (code: ArtefactErrorCode, message: string): never => {
    throw new ArtefactError(code, message, file);
  };
  if (!(bytes instanceof Uint8Array)) fail(ARTEFACT.E_ARTEFACT_CORRUPT, `not bytes: cannot read a ${what}`);
  const sig = signature(magic);
  if (!startsWith(bytes, sig)) {
    if (bytes.length < sig.length && startsWith(sig, bytes)) fail(ARTEFACT.E_ARTEFACT_CORRUPT, `truncated ${what} (${bytes.length} bytes)`);
    const other = sniffArtefact(bytes);
    if (other === 'module') fail(ARTEFACT.E_ARTEFACT_FOREIGN, `an rvm module artefact, not a ${what}`);
    if (other === 'bundle') fail(ARTEFACT.E_ARTEFACT_FOREIGN, `an rvm bundle, not a ${what}`);
    fail(ARTEFACT.E_ARTEFACT_FOREIGN, `not an rvm ${what}`);
  }
  const values: unknown[] = [];
  let problem = null as ArtefactError | null;
  let trailing = false;
  try {
    const rest = bytes.subarray(sig.length);
    loadCodec().unpackr.unpackMultiple(rest, (value: unknown, _start?: number, end = rest.length) => {
      values.push(value);
      if (values.length === 1 && value !== FORMAT_VERSION) {
        problem = Number.isInteger(value)
          ? new ArtefactError(ARTEFACT.E_ARTEFACT_VERSION, `${what} format ${String(value)} is not supported (this rvm reads format ${FORMAT_VERSION})`, file)
          : new ArtefactError(ARTEFACT.E_ARTEFACT_CORRUPT, `damaged ${what}: bad format field`, file);
        return false;
      }
      if (values.length === 2) {
        const digest = value;
        if (!(digest instanceof Uint8Array) || digest.length !== DIGEST_BYTES || !Buffer.from(digest).equals(sha256(rest.subarray(end)))) {
          problem = new ArtefactError(ARTEFACT.E_ARTEFACT_CORRUPT, `damaged ${what}: checksum mismatch`, file);
          return false;
        }
      }
      if (values.length === 4 && end !== rest.length) {
        trailing = true;
        return false;
      }
      return undefined;
    });
  } catch {
    if (!problem) fail(ARTEFACT.E_ARTEFACT_CORRUPT, `damaged ${what}: unreadable msgpack data`);
  }
  if (problem) throw problem;
  if (values.length !== 4 || trailing) fail(ARTEFACT.E_ARTEFACT_CORRUPT, trailing ? `damaged ${what}: trailing data` : `truncated ${what}`);
  return { header: values[2], body: values[3] };
}

/** Encodes one compiled module. The module is trusted (it comes from the compiler). */
export function encodeModule(m: CompiledModule): Uint8Array {
  const { compiler, sourceHash, plugins } = m.header;
  const chunks = m.chunks.map((c) => pack({ ...c, code: int32Bytes(c.code), lines: int32Bytes(c.lines) }));
  const routes = m.routes.map((r) => ({ ...r, responses: pack(r.responses) }));
  const callables = (list: CallableMeta[]) => list.map((c) => (c.responses === undefined ? c : { ...c, responses: pack(c.responses) }));
  const body: Record<string, unknown> = {
    file: m.file,
    chunks,
    routes,
    functions: callables(m.functions),
    guards: callables(m.guards),
    types: m.types,
    middleware: m.middleware,
  };
  if (m.middlewareMeta !== undefined) body.middlewareMeta = { ...m.middlewareMeta, responses: pack(m.middlewareMeta.responses) };
  if (m.consts !== undefined) body.consts = m.consts;
  return encodeEnvelope(ARTEFACT_MAGIC, { compiler, sourceHash, plugins }, body);
}

/** Decodes and validates one module; throws only ArtefactError, whatever the bytes. */
export function decodeModule(bytes: Uint8Array, file?: string): CompiledModule {
  try {
    const { header, body } = decodeEnvelope(bytes, ARTEFACT_MAGIC, 'module artefact', file);
    const h = record(header, 'header');
    return readModule({ magic: ARTEFACT_MAGIC, format: FORMAT_VERSION, compiler: h.compiler, sourceHash: h.sourceHash, plugins: h.plugins }, body, true);
  } catch (e) {
    if (e instanceof ArtefactError) {
      if (e.file !== undefined || file === undefined) throw e;
      throw new ArtefactError(e.code, e.message, file);
    }
    // The validator throws only ArtefactError; anything else (a stack overflow on absurd
    // nesting, say) still means the bytes are unusable.
    throw new ArtefactError(ARTEFACT.E_ARTEFACT_CORRUPT, `damaged module artefact: ${e instanceof Error ? e.message : String(e)}`, file);
  }
}

/**
 * Decodes a module rvm's own cache wrote: the envelope (magic, format, sha256 of the content)
 * is checked, the structure is not walked. For `app/.rvm/cache` only, where the digest and the
 * header (same compiler, same source hash, same plugins) already prove the bytes are what this
 * compiler produced; bundles and anything handed in from outside go through decodeModule.
 * Returns null when the envelope or the header does not match `expect`.
 */
export function decodeCachedModule(bytes: Uint8Array, expect: { compiler: string; sourceHash: string; plugins: string }): CompiledModule | null {
  try {
    const { header, body } = decodeEnvelope(bytes, ARTEFACT_MAGIC, 'module artefact');
    const h = header as Record<string, unknown>;
    if (h.compiler !== expect.compiler || h.sourceHash !== expect.sourceHash || h.plugins !== expect.plugins) return null;
    const b = body as Omit<CompiledModule, 'header'>;
    for (let i = 0; i < b.chunks.length; i++) unpackOnFirstRead(b.chunks, i, unpackChunk);
    for (const r of b.routes) unpackOnFirstRead(r, 'responses', unpack);
    for (const c of b.functions) unpackOnFirstRead(c, 'responses', unpack);
    for (const c of b.guards) unpackOnFirstRead(c, 'responses', unpack);
    if (b.middlewareMeta !== undefined) unpackOnFirstRead(b.middlewareMeta, 'responses', unpack);
    return {
      ...b,
      header: { magic: ARTEFACT_MAGIC, format: FORMAT_VERSION, compiler: expect.compiler, sourceHash: expect.sourceHash, plugins: expect.plugins },
    };
  } catch {
    return null;
  }
}
