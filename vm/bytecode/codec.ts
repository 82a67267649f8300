/**
 * The bytes under an artefact, shared by its envelope (artefact.ts) and its verifier (verify.ts):
 * the msgpack codec (loaded by the first artefact read or written), code and line tables as
 * little-endian int32s, lazily unpacked values, and ArtefactError, the only error decoding throws.
 */
import { createRequire } from 'node:module';
import type * as msgpackr from 'msgpackr';
import type { ChunkData } from './module.js';
import { ARTEFACT, type ArtefactCode } from '../errors.js';
import { onFirstUse } from '../on-first-use.js';

/** Why an artefact or bundle was refused; listed in spec/errors.md. */
export type ArtefactErrorCode = ArtefactCode;

/** The only error decoding throws. `message` is one line and names the file when known. */
export class ArtefactError extends Error {
  constructor(
    readonly code: ArtefactErrorCode,
    message: string,
    readonly file?: string,
  ) {
    super(file === undefined ? message : `${file}: ${message}`);
    this.name = 'ArtefactError';
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The msgpack codec, made by the first artefact read or written: `rvm check` compiles without the cache and never loads msgpackr. */
export const loadCodec = onFirstUse(() => {
  const { Packr, Unpackr } = createRequire(import.meta.url)('msgpackr') as typeof msgpackr;
  // Plain maps in, plain objects out: no msgpackr records or shared structures, so the bytes
  // are readable by any msgpack decoder.
  return { packr: new Packr({ useRecords: false, variableMapSize: true }), unpackr: new Unpackr({ useRecords: false, mapsAsObjects: true }) };
});

export function pack(value: unknown): Uint8Array {
  return loadCodec().packr.pack(value);
}

export function unpack(bytes: Uint8Array): unknown {
  return loadCodec().unpackr.unpack(bytes) as unknown;
}

/** The bytes of a code or line array: little-endian int32s. */
export function int32Bytes(a: Int32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const out = new Uint8Array(a.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < a.length; i++) view.setInt32(i * 4, a[i]!, true);
  return out;
}

/** Rebuilds an Int32Array from little-endian bytes; copies, so a misaligned slice is fine. */
export function int32sFromBytes(b: Uint8Array, at: string): Int32Array {
  if (b.byteLength % 4 !== 0)
    throw new ArtefactError(ARTEFACT.E_ARTEFACT_CORRUPT, `damaged module artefact: ${at}: ${b.byteLength} bytes is not a whole number of int32s`);
  // new Uint8Array(b) copies (Buffer#slice would not): the Int32Array must own an aligned buffer.
  if (LITTLE_ENDIAN) return new Int32Array(new Uint8Array(b).buffer);
  const out = new Int32Array(b.byteLength / 4);
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt32(i * 4, true);
  return out;
}

/** A chunk as stored, its code and line table rebuilt as Int32Arrays. */
export function unpackChunk(bytes: Uint8Array): ChunkData {
  const c = unpack(bytes) as Omit<ChunkData, 'code' | 'lines'> & { code: Uint8Array; lines: Uint8Array };
  return { ...c, code: int32sFromBytes(c.code, 'code'), lines: int32sFromBytes(c.lines, 'lines') };
}

/**
 * Turns a packed value of a cached module (a chunk, or the `responses` of a route or callable)
 * into a property that unpacks it on first read and then holds it. A start from the cache thus
 * decodes only what it uses: the API reference reads responses, and a chunk is read when the
 * linker binds it — at start, or on first run once the app is proven to link (see link.ts). The
 * bytes are already proven by the digest. A value that is not packed (a `fn` without responses)
 * is left as it is.
 */
export function unpackOnFirstRead<K extends PropertyKey>(owner: { [key in K]?: unknown }, key: K, decode: (bytes: Uint8Array) => unknown): void {
  const stored = owner[key];
  if (!(stored instanceof Uint8Array)) return;
  // A copy, so the value does not keep the whole artefact file's buffer alive.
  const packed = new Uint8Array(stored);
  const settle = (value: unknown): void => {
    Object.defineProperty(owner, key, { value, writable: true, enumerable: true, configurable: true });
  };
  Object.defineProperty(owner, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value = decode(packed);
      settle(value);
      return value;
    },
    set: settle,
  });
}
