/**
 * MIME types from magic bytes: what a file *is*, judged only by its first bytes, never by its
 * name or the client's Content-Type (which an attacker chooses). `@image`, `@document` and
 * `@mime` check the result.
 */

const PNG = 'image/png';
const JPEG = 'image/jpeg';
const GIF = 'image/gif';
const WEBP = 'image/webp';
const BMP = 'image/bmp';
const TIFF = 'image/tiff';
const AVIF = 'image/avif';
const HEIC = 'image/heic';
const ICO = 'image/x-icon';
const PDF = 'application/pdf';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const ODT = 'application/vnd.oasis.opendocument.text';
const ODS = 'application/vnd.oasis.opendocument.spreadsheet';
const ODP = 'application/vnd.oasis.opendocument.presentation';
const OLE = 'application/x-ole-storage';
const RTF = 'application/rtf';
const ZIP = 'application/zip';
const TEXT = 'text/plain';

/**
 * How many leading bytes are kept for sniffing: the ISO-BMFF and zip checks read furthest (a
 * few local headers of an office document), and 4 KiB + a little covers them without holding
 * more of an upload in memory than one page.
 */
export const SNIFF_BYTES = 4100;

/** The type of content nothing recognises, and of an empty file (nothing to recognise). */
export const UNKNOWN_TYPE = 'application/octet-stream';

/** Types `@image` accepts. */
export const IMAGE_TYPES: ReadonlySet<string> = new Set([PNG, JPEG, GIF, WEBP, BMP, TIFF, AVIF, HEIC, ICO]);

/** Types `@document` accepts: PDF, office documents (OOXML, ODF, legacy OLE2), RTF and plain text. */
export const DOCUMENT_TYPES: ReadonlySet<string> = new Set([PDF, DOCX, XLSX, PPTX, ODT, ODS, ODP, OLE, RTF, TEXT]);

/** Every type sniffMime can answer, for `@mime` argument checks and docs. */
export const SNIFFED_TYPES: ReadonlySet<string> = new Set([...IMAGE_TYPES, ...DOCUMENT_TYPES, ZIP, UNKNOWN_TYPE]);

/**
 * The MIME type of content starting with `head`. `complete` says `head` is the whole file; by
 * default a head shorter than SNIFF_BYTES is taken as whole, so only a cut head may end in the
 * middle of a UTF-8 sequence and still be text. An empty file is `application/octet-stream`:
 * it is neither an image nor a document, so `@image`/`@document` refuse it.
 */
export function sniffMime(head: Uint8Array, complete = head.length < SNIFF_BYTES): string {
  if (head.length === 0) return UNKNOWN_TYPE;
  return binaryType(head) ?? (isText(head, complete) ? TEXT : UNKNOWN_TYPE);
}

function binaryType(b: Uint8Array): string | null {
  switch (b[0]) {
    case 0x89:
      return startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) ? PNG : null;
    case 0xff:
      return b[1] === 0xd8 && b[2] === 0xff ? JPEG : null;
    case 0x47:
      return ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a') ? GIF : null;
    case 0x52:
      if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return WEBP;
      return null;
    case 0x42:
      return isBmp(b) ? BMP : null;
    case 0x49:
      return startsWith(b, [0x49, 0x49, 0x2a, 0x00]) ? TIFF : null;
    case 0x4d:
      return startsWith(b, [0x4d, 0x4d, 0x00, 0x2a]) ? TIFF : null;
    case 0x00:
      return isIco(b) ? ICO : ftypType(b);
    case 0x25:
      return ascii(b, 0, '%PDF-') ? PDF : null;
    case 0x50:
      return zipType(b);
    case 0xd0:
      return startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) ? OLE : null;
    case 0x7b:
      return ascii(b, 0, '{\\rtf') ? RTF : null;
  }
  return null;
}

function startsWith(b: Uint8Array, sig: readonly number[], at = 0): boolean {
  if (b.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
}

function ascii(b: Uint8Array, at: number, text: string): boolean {
  if (b.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (b[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

function u16le(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8);
}

function u32le(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16)) + b[at + 3] * 0x1000000;
}

function u32be(b: Uint8Array, at: number): number {
  return b[at] * 0x1000000 + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);
}

/** Sizes of the DIB headers BMP writers use; `BM` alone would match text starting "BM". */
const BMP_DIB_SIZES = new Set([12, 16, 40, 52, 56, 64, 108, 124]);

function isBmp(b: Uint8Array): boolean {
  // "BM", file size, two reserved zero words, pixel offset, then the DIB header's own size.
  return b.length >= 18 && b[1] === 0x4d && u32le(b, 6) === 0 && BMP_DIB_SIZES.has(u32le(b, 14));
}

function isIco(b: Uint8Array): boolean {
  // Reserved 0, type 1 (icon), at least one image, and the first entry's reserved byte is 0.
  return b.length >= 22 && b[1] === 0 && b[2] === 1 && b[3] === 0 && u16le(b, 4) > 0 && b[9] === 0;
}

const AVIF_BRANDS = new Set(['avif', 'avis']);
const HEIC_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx']);

/** ISO-BMFF `ftyp` box: the major brand decides, else the compatible brands (for generic `mif1`). */
function ftypType(b: Uint8Array): string | null {
  if (!ascii(b, 4, 'ftyp') || b.length < 12) return null;
  const boxEnd = Math.min(u32be(b, 0), b.length);
  const brands = [brand(b, 8)];
  for (let at = 16; at + 4 <= boxEnd; at += 4) brands.push(brand(b, at));
  for (const name of brands) {
    if (AVIF_BRANDS.has(name)) return AVIF;
    if (HEIC_BRANDS.has(name)) return HEIC;
  }
  return null;
}

function brand(b: Uint8Array, at: number): string {
  return String.fromCharCode(b[at], b[at + 1], b[at + 2], b[at + 3]);
}

const ZIP_LOCAL_HEADER = [0x50, 0x4b, 0x03, 0x04];
const ZIP_EMPTY_ARCHIVE = [0x50, 0x4b, 0x05, 0x06];
/** Bytes of a zip local file header before the entry name. */
const ZIP_HEADER_SIZE = 30;
/** General-purpose flag: sizes follow the data in a descriptor, so the header holds zeros. */
const ZIP_FLAG_DATA_DESCRIPTOR = 0x08;
const OOXML_FOLDERS: ReadonlyArray<[string, string]> = [
  ['word/', DOCX],
  ['xl/', XLSX],
  ['ppt/', PPTX],
];
const ODF_TYPES = new Set([ODT, ODS, ODP]);

/**
 * Zip archives: ODF when the first entry is an uncompressed `mimetype` naming an ODF type;
 * OOXML by the first `word/`, `xl/` or `ppt/` entry among the local headers within the head;
 * any other zip is `application/zip`.
 */
function zipType(b: Uint8Array): string | null {
  if (startsWith(b, ZIP_EMPTY_ARCHIVE)) return ZIP;
  if (!startsWith(b, ZIP_LOCAL_HEADER)) return null;
  let at = 0;
  let first = true;
  const text = new TextDecoder('utf-8');
  while (at >= 0 && at + ZIP_HEADER_SIZE <= b.length && startsWith(b, ZIP_LOCAL_HEADER, at)) {
    const flags = u16le(b, at + 6);
    const method = u16le(b, at + 8);
    const compressed = u32le(b, at + 18);
    const nameLength = u16le(b, at + 26);
    const extraLength = u16le(b, at + 28);
    const nameStart = at + ZIP_HEADER_SIZE;
    if (nameStart + nameLength > b.length) break;
    const name = text.decode(b.subarray(nameStart, nameStart + nameLength));
    const dataStart = nameStart + nameLength + extraLength;
    if (first && name === 'mimetype' && method === 0) {
      const type = text.decode(b.subarray(dataStart, Math.min(dataStart + compressed, b.length))).trim();
      if (ODF_TYPES.has(type)) return type;
    }
    first = false;
    for (const [folder, type] of OOXML_FOLDERS) if (name.startsWith(folder)) return type;
    // With a data descriptor the size is unknown here: look for the next header instead.
    at = flags & ZIP_FLAG_DATA_DESCRIPTOR ? indexOfSignature(b, dataStart) : dataStart + compressed;
  }
  return ZIP;
}

function indexOfSignature(b: Uint8Array, from: number): number {
  for (let i = from; i + 4 <= b.length; i++) if (startsWith(b, ZIP_LOCAL_HEADER, i)) return i;
  return -1;
}

/**
 * Plain text: valid UTF-8 without NUL and without C0 controls other than tab, LF, CR and form
 * feed (binary formats nearly always contain some). A multi-byte sequence cut by the end of an
 * incomplete head is allowed.
 */
function isText(b: Uint8Array, complete: boolean): boolean {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i];
    if (c < 0x80) {
      if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c) return false;
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return false;
    if (i + need >= n + (complete ? 0 : need)) return false;
    let cp = c & (0x3f >> need);
    let j = 1;
    for (; j <= need && i + j < n; j++) {
      const cc = b[i + j];
      if ((cc & 0xc0) !== 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (j > need && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) return false;
    i += need + 1;
  }
  return true;
}
