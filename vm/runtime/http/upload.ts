/**
 * An uploaded file as the language and validators see it: its client-given name, the MIME type
 * sniffed from its first bytes (never the client's claim), its size and where it lies on disk
 * for the rest of the request.
 */
import { HostObject, type Value } from '../../values.js';
import { SNIFF_BYTES, sniffMime } from './sniff.js';

export { SNIFF_BYTES };

export class UploadedFile extends HostObject {
  readonly typeName = 'file';

  constructor(
    /** The file name the client sent (untrusted; only its extension is ever used). */
    readonly name: string,
    /** MIME type sniffed from the content; `application/octet-stream` when unknown. */
    readonly type: string,
    readonly size: number,
    /** Temporary file holding the content, removed after the request; null when not on disk. */
    readonly path: string | null,
    /** The first SNIFF_BYTES bytes. */
    readonly head: Uint8Array,
  ) {
    super();
  }

  /** Lower-case extension without the dot (`'png'`), or `''`. */
  get extension(): string {
    const base = this.name.slice(Math.max(this.name.lastIndexOf('/'), this.name.lastIndexOf('\\')) + 1);
    const dot = base.lastIndexOf('.');
    return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase();
  }

  get(key: string): Value | undefined {
    switch (key) {
      case 'name':
        return this.name;
      case 'type':
        return this.type;
      case 'size':
        return this.size;
      case 'path':
        return this.path;
      case 'extension':
        return this.extension;
    }
    return undefined;
  }

  override keys(): string[] {
    return ['name', 'type', 'size', 'path', 'extension'];
  }

  /** Responses show what was received, never where it is stored. */
  toJSON(): unknown {
    return { name: this.name, type: this.type, size: this.size };
  }
}

/**
 * A file value from bytes in memory (fuzzing, tests, validators' arbitraries): sniffed like an
 * upload, `size` is the byte count, `path` null.
 */
export function uploadedFromBytes(name: string, bytes: Uint8Array): UploadedFile {
  // A copy, so the head does not keep a large buffer alive.
  const head = bytes.slice(0, SNIFF_BYTES);
  return new UploadedFile(name, sniffMime(head, bytes.length <= SNIFF_BYTES), bytes.length, null, head);
}
