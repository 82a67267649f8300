/**
 * Files for the `file` validators' arbitraries: for every type the upload sniffer recognises, the
 * smallest real signature (magic bytes, zip entries of office documents) followed by padding,
 * under a name with a matching extension.
 */
import type { Arbitrary, FastCheck, FileSample } from '../../plugins/sdk.js';
import { builtOnce } from './common.js';

/** One kind of file the sniffer tells apart. */
export interface FileKind {
  /** The MIME type the sniffer gives it. */
  mime: string;
  /** Extensions such files usually carry (no dot, lower-case). */
  extensions: readonly string[];
  /** The leading bytes that make it that type. */
  head: Uint8Array;
  /** How padding after the head is made: random bytes, zeros (zip archives end there) or printable text. */
  padding: 'random' | 'zero' | 'text';
}

/** Default most padding bytes after a head: files stay small so runs stay fast. */
export const MAX_SAMPLE_PADDING = 512;

const enc = new TextEncoder();

function bytes(...parts: (string | readonly number[])[]): Uint8Array {
  const chunks = parts.map((p) => (typeof p === 'string' ? enc.encode(p) : Uint8Array.from(p)));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function u16(n: number): number[] {
  return [n & 0xff, (n >> 8) & 0xff];
}

function u32(n: number): number[] {
  return [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];
}

/** A stored (uncompressed) zip entry: local file header, name, data. */
function zipEntry(name: string, data: string): Uint8Array {
  const n = enc.encode(name);
  const d = enc.encode(data);
  // version 20, no flags, method 0 (stored), zero time/date/crc (the sniffer reads none of them).
  const header = [
    0x50,
    0x4b,
    0x03,
    0x04,
    ...u16(20),
    ...u16(0),
    ...u16(0),
    ...u16(0),
    ...u16(0),
    ...u32(0),
    ...u32(d.length),
    ...u32(d.length),
    ...u16(n.length),
    ...u16(0),
  ];
  return bytes(header, [...n], [...d]);
}

function ooxml(folder: string, part: string): Uint8Array {
  return bytes([...zipEntry('[Content_Types].xml', '<Types/>')], [...zipEntry(`${folder}/${part}`, '<x/>')]);
}

function odf(type: string): Uint8Array {
  return zipEntry('mimetype', type);
}

/** ISO-BMFF `ftyp` box with a major brand and `mif1` as compatible brand. */
function ftyp(brand: string): Uint8Array {
  return bytes([0, 0, 0, 20], 'ftyp', brand, [0, 0, 0, 0], 'mif1');
}

/** Every kind the sniffer recognises, with a head it recognises. */
export const FILE_KINDS: readonly FileKind[] = [
  { mime: 'image/png', extensions: ['png'], head: bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), padding: 'random' },
  { mime: 'image/jpeg', extensions: ['jpg', 'jpeg'], head: bytes([0xff, 0xd8, 0xff, 0xe0]), padding: 'random' },
  { mime: 'image/gif', extensions: ['gif'], head: bytes('GIF89a'), padding: 'random' },
  { mime: 'image/webp', extensions: ['webp'], head: bytes('RIFF', [0, 0, 0, 0], 'WEBP'), padding: 'random' },
  { mime: 'image/bmp', extensions: ['bmp'], head: bytes('BM', u32(0), u32(0), u32(54), u32(40)), padding: 'random' },
  { mime: 'image/tiff', extensions: ['tif', 'tiff'], head: bytes([0x49, 0x49, 0x2a, 0x00]), padding: 'random' },
  { mime: 'image/avif', extensions: ['avif'], head: ftyp('avif'), padding: 'random' },
  { mime: 'image/heic', extensions: ['heic'], head: ftyp('heic'), padding: 'random' },
  // Header (reserved, type 1, one image) and one 16-byte directory entry whose reserved byte is 0.
  { mime: 'image/x-icon', extensions: ['ico'], head: bytes([0, 0, 1, 0], u16(1), [16, 16, 0, 0], u16(1), u16(32), u32(0), u32(22)), padding: 'random' },
  { mime: 'application/pdf', extensions: ['pdf'], head: bytes('%PDF-1.7\n'), padding: 'random' },
  {
    mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    extensions: ['docx'],
    head: ooxml('word', 'document.xml'),
    padding: 'zero',
  },
  { mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', extensions: ['xlsx'], head: ooxml('xl', 'workbook.xml'), padding: 'zero' },
  {
    mime: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    extensions: ['pptx'],
    head: ooxml('ppt', 'presentation.xml'),
    padding: 'zero',
  },
  { mime: 'application/vnd.oasis.opendocument.text', extensions: ['odt'], head: odf('application/vnd.oasis.opendocument.text'), padding: 'zero' },
  { mime: 'application/vnd.oasis.opendocument.spreadsheet', extensions: ['ods'], head: odf('application/vnd.oasis.opendocument.spreadsheet'), padding: 'zero' },
  {
    mime: 'application/vnd.oasis.opendocument.presentation',
    extensions: ['odp'],
    head: odf('application/vnd.oasis.opendocument.presentation'),
    padding: 'zero',
  },
  { mime: 'application/x-ole-storage', extensions: ['doc', 'xls', 'ppt'], head: bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), padding: 'random' },
  { mime: 'application/rtf', extensions: ['rtf'], head: bytes('{\\rtf1\\ansi '), padding: 'random' },
  { mime: 'application/zip', extensions: ['zip'], head: zipEntry('hello.txt', 'hello'), padding: 'zero' },
  { mime: 'text/plain', extensions: ['txt', 'csv', 'md'], head: bytes('Text: '), padding: 'text' },
  // A NUL makes it binary; the fixed second to eighth bytes match no signature.
  { mime: 'application/octet-stream', extensions: ['bin', 'dat'], head: bytes([0, 1, 2, 3, 4, 5, 6, 7]), padding: 'random' },
];

/** The kinds whose MIME type passes `test`. */
export function kindsWhere(test: (mime: string) => boolean): FileKind[] {
  return FILE_KINDS.filter((k) => test(k.mime));
}

/** `len` pseudo-random bytes from `seed` (xorshift32): cheap even for large samples. */
function noise(seed: number, len: number): Uint8Array {
  const out = new Uint8Array(len);
  let x = seed | 0 || 1;
  for (let i = 0; i < len; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** The bytes of a file of `kind` with `size` bytes in all (at least its head). */
export function fileBytes(kind: FileKind, size: number, seed: number): Uint8Array {
  const out = new Uint8Array(Math.max(size, kind.head.length));
  out.set(kind.head);
  const padLength = out.length - kind.head.length;
  if (kind.padding === 'random') out.set(noise(seed, padLength), kind.head.length);
  else if (kind.padding === 'text') {
    const pad = noise(seed, padLength);
    // Printable ASCII only, so the file stays text from end to end.
    for (let i = 0; i < pad.length; i++) out[kind.head.length + i] = 0x20 + (pad[i]! % 95);
  }
  return out;
}

/** A file name stem: letters, digits, `-` and `_`. */
export const fileStem = builtOnce((fc) => fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,11}$/));

/** `stem.ext` with the extension in random letter case (extensions compare case-insensitively). */
export function fileName(fc: FastCheck, extensions: readonly string[]): Arbitrary<string> {
  return fc.tuple(fileStem(fc), fc.constantFrom(...extensions), fc.boolean()).map(([stem, ext, upper]) => `${stem}.${upper ? ext.toUpperCase() : ext}`);
}

/** Files of the given kinds, named after their kind unless `names` is given, padded up to `maxPadding` bytes. */
export function fileSamples(
  fc: FastCheck,
  kinds: readonly FileKind[],
  options: { names?: Arbitrary<string>; maxPadding?: number } = {},
): Arbitrary<FileSample> {
  const padding = fc.integer({ min: 0, max: options.maxPadding ?? MAX_SAMPLE_PADDING });
  // One arbitrary per kind, built once: building arbitraries per sample (chain) is slow.
  const perKind = kinds.map((kind) =>
    fc
      .tuple(options.names ?? fileName(fc, kind.extensions), padding, fc.integer())
      .map(([name, pad, seed]) => ({ name, bytes: fileBytes(kind, kind.head.length + pad, seed) })),
  );
  return fc.oneof(...perKind);
}

/** Files of exactly the sizes `sizes` yields (any kind whose head fits; zeros when none does). */
export function filesOfSize(fc: FastCheck, sizes: Arbitrary<number>): Arbitrary<FileSample> {
  const names = FILE_KINDS.map((kind) => fileName(fc, kind.extensions));
  return fc.tuple(sizes, fc.nat(), fc.integer(), fc.tuple(...names), fileStem(fc)).map(([size, pick, seed, kindNames, stem]) => {
    const fitting = FILE_KINDS.map((kind, i) => ({ kind, name: kindNames[i]! })).filter(({ kind }) => kind.head.length <= size);
    if (fitting.length === 0) return { name: `${stem}.bin`, bytes: new Uint8Array(size) };
    const { kind, name } = fitting[pick % fitting.length]!;
    return { name, bytes: fileBytes(kind, size, seed) };
  });
}

/** Any file of any kind. */
export function anyFileSample(fc: FastCheck): Arbitrary<FileSample> {
  return fileSamples(fc, FILE_KINDS);
}
