/**
 * Minimal, real byte signatures of every format the sniffer knows, built here so the tests own
 * their fixtures (sniff, multipart and upload tests share them).
 */

export function bytes(...parts: Array<string | number[] | Uint8Array>): Uint8Array {
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
}

export function u16(n: number): number[] {
  return [n & 0xff, (n >> 8) & 0xff];
}
export function u32(n: number): number[] {
  return [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];
}
export function be32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

/** One zip local file header with its (stored) data. */
export function zipEntry(name: string, data = '', flags = 0): Uint8Array {
  const nameBytes = Buffer.from(name);
  const body = Buffer.from(data);
  const size = flags & 0x08 ? 0 : body.length;
  return bytes(
    [0x50, 0x4b, 0x03, 0x04],
    u16(20),
    u16(flags),
    u16(0),
    u16(0),
    u16(0),
    u32(0),
    u32(size),
    u32(size),
    u16(nameBytes.length),
    u16(0),
    nameBytes,
    body,
  );
}

export const SAMPLES: Record<string, Uint8Array> = {
  png: bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], be32(13), 'IHDR', be32(1), be32(1), [8, 6, 0, 0, 0]),
  jpeg: bytes([0xff, 0xd8, 0xff, 0xe0], u16(0x1000), 'JFIF\0', [1, 1, 0, 0, 1, 0, 1, 0, 0]),
  gif: bytes('GIF89a', u16(1), u16(1), [0x80, 0, 0]),
  gif87: bytes('GIF87a', u16(1), u16(1), [0, 0, 0]),
  webp: bytes('RIFF', u32(26), 'WEBPVP8L', u32(10), [0x2f, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
  bmp: bytes('BM', u32(58), u32(0), u32(54), u32(40), u32(1), u32(1), u16(1), u16(24)),
  tiffLe: bytes([0x49, 0x49, 0x2a, 0x00], u32(8)),
  tiffBe: bytes([0x4d, 0x4d, 0x00, 0x2a], be32(8)),
  avif: bytes(be32(28), 'ftyp', 'avif', be32(0), 'avif', 'mif1', 'miaf'),
  heic: bytes(be32(24), 'ftyp', 'heic', be32(0), 'mif1', 'heic'),
  heifGenericAvif: bytes(be32(24), 'ftyp', 'mif1', be32(0), 'mif1', 'avif'),
  ico: bytes(u16(0), u16(1), u16(1), [16, 16, 0, 0], u16(1), u16(32), u32(1128), u32(22)),
  pdf: bytes('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n'),
  docx: bytes(zipEntry('[Content_Types].xml', '<Types/>'), zipEntry('_rels/.rels', '<Relationships/>'), zipEntry('word/document.xml', '<w:document/>')),
  xlsx: bytes(zipEntry('[Content_Types].xml', '<Types/>'), zipEntry('xl/workbook.xml', '<workbook/>')),
  pptx: bytes(zipEntry('[Content_Types].xml', '<Types/>'), zipEntry('ppt/presentation.xml', '<p/>')),
  odt: bytes(zipEntry('mimetype', 'application/vnd.oasis.opendocument.text'), zipEntry('content.xml', '<x/>')),
  ods: bytes(zipEntry('mimetype', 'application/vnd.oasis.opendocument.spreadsheet')),
  odp: bytes(zipEntry('mimetype', 'application/vnd.oasis.opendocument.presentation')),
  zip: bytes(zipEntry('readme.txt', 'hello'), zipEntry('src/main.c', 'int main;')),
  emptyZip: bytes([0x50, 0x4b, 0x05, 0x06], new Array(18).fill(0)),
  ole: bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], new Array(24).fill(0)),
  rtf: bytes('{\\rtf1\\ansi Hello}'),
  text: bytes(Buffer.from('Hello, wörld ✓ 🙂\r\n\ttab\fform feed\n')),
  garbage: bytes([0x13, 0x37, 0x00, 0xfe, 0xed, 0xfa, 0xce, 0x01, 0x02]),
};
