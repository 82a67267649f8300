import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DOCUMENT_TYPES, IMAGE_TYPES, SNIFFED_TYPES, SNIFF_BYTES, UNKNOWN_TYPE, sniffMime } from '../../../../vm/runtime/http/sniff.js';
import { uploadedFromBytes } from '../../../../vm/runtime/http/upload.js';
import { SAMPLES, be32, bytes, u32, zipEntry } from '../file-samples.js';

const EXPECTED: Record<string, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  gif87: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  tiffLe: 'image/tiff',
  tiffBe: 'image/tiff',
  avif: 'image/avif',
  heic: 'image/heic',
  heifGenericAvif: 'image/avif',
  ico: 'image/x-icon',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  zip: 'application/zip',
  emptyZip: 'application/zip',
  ole: 'application/x-ole-storage',
  rtf: 'application/rtf',
  text: 'text/plain',
  garbage: 'application/octet-stream',
};

describe('sniffMime', () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    test(`${name} → ${expected}`, () => {
      assert.equal(sniffMime(SAMPLES[name]), expected);
    });
  }

  test('every sniffable type is covered by a sample', () => {
    const seen = new Set(Object.values(EXPECTED));
    for (const type of SNIFFED_TYPES) assert.ok(seen.has(type), type);
  });

  test('an empty file is application/octet-stream, neither image nor document', () => {
    assert.equal(sniffMime(new Uint8Array(0)), UNKNOWN_TYPE);
  });

  test('a PNG named .pdf is still a PNG: the name is never consulted', () => {
    const file = uploadedFromBytes('report.pdf', SAMPLES.png);
    assert.equal(file.type, 'image/png');
    assert.equal(file.extension, 'pdf');
  });

  test('text that merely starts like a signature is text', () => {
    assert.equal(sniffMime(bytes('BMW is a car maker\n')), 'text/plain');
    assert.equal(sniffMime(bytes('GIF89 is not a gif')), 'text/plain');
    assert.equal(sniffMime(bytes('PK is not a zip')), 'text/plain');
  });

  test('a plain MP4 ftyp box is not an image', () => {
    assert.equal(sniffMime(bytes(be32(20), 'ftyp', 'isom', be32(0), 'mp41')), UNKNOWN_TYPE);
  });

  test('a mimetype entry naming a non-ODF type, or not first, is a plain zip', () => {
    assert.equal(sniffMime(zipEntry('mimetype', 'application/x-evil')), 'application/zip');
    assert.equal(sniffMime(bytes(zipEntry('a.txt', 'x'), zipEntry('mimetype', 'application/vnd.oasis.opendocument.text'))), 'application/zip');
  });

  test('OOXML entries after a data-descriptor entry are still found', () => {
    const withDescriptor = bytes(
      zipEntry('[Content_Types].xml', '<Types/>', 0x08),
      [0x50, 0x4b, 0x07, 0x08],
      u32(0),
      u32(8),
      u32(8),
      zipEntry('xl/workbook.xml'),
    );
    assert.equal(sniffMime(withDescriptor), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  });

  test('text rules: NUL and other C0 controls make it binary; invalid UTF-8 is binary', () => {
    assert.equal(sniffMime(bytes('abc\0def')), UNKNOWN_TYPE);
    assert.equal(sniffMime(bytes('abc\x1bdef')), UNKNOWN_TYPE);
    assert.equal(sniffMime(bytes([0x61, 0xc3, 0x28])), UNKNOWN_TYPE);
    assert.equal(sniffMime(bytes([0xc0, 0x80])), UNKNOWN_TYPE, 'overlong NUL');
    assert.equal(sniffMime(bytes([0xed, 0xa0, 0x80])), UNKNOWN_TYPE, 'surrogate');
  });

  test('a multi-byte sequence cut at the end of a full head is still text; in a whole file it is not', () => {
    const cut = new Uint8Array(SNIFF_BYTES);
    cut.fill(0x61);
    cut.set([0xe2, 0x9c], SNIFF_BYTES - 2);
    assert.equal(sniffMime(cut), 'text/plain');
    assert.equal(sniffMime(cut, true), UNKNOWN_TYPE);
    assert.equal(sniffMime(bytes('ok ', [0xe2, 0x9c])), UNKNOWN_TYPE);
  });

  test('IMAGE_TYPES and DOCUMENT_TYPES hold the agreed types', () => {
    assert.deepEqual([...IMAGE_TYPES].sort(), [
      'image/avif',
      'image/bmp',
      'image/gif',
      'image/heic',
      'image/jpeg',
      'image/png',
      'image/tiff',
      'image/webp',
      'image/x-icon',
    ]);
    assert.equal(DOCUMENT_TYPES.size, 10);
    for (const t of ['application/pdf', 'application/x-ole-storage', 'application/rtf', 'text/plain']) assert.ok(DOCUMENT_TYPES.has(t), t);
    assert.ok(!DOCUMENT_TYPES.has('application/zip'));
    for (const t of IMAGE_TYPES) assert.ok(!DOCUMENT_TYPES.has(t));
  });
});

describe('uploadedFromBytes', () => {
  test('sniffs, measures, keeps only the head, has no path', () => {
    const big = new Uint8Array(SNIFF_BYTES * 3);
    big.set(SAMPLES.pdf);
    const file = uploadedFromBytes('x.bin', big);
    assert.equal(file.type, 'application/pdf');
    assert.equal(file.size, SNIFF_BYTES * 3);
    assert.equal(file.path, null);
    assert.equal(file.head.length, SNIFF_BYTES);
    assert.equal(file.get('type'), 'application/pdf');
    assert.deepEqual(file.toJSON(), { name: 'x.bin', type: 'application/pdf', size: SNIFF_BYTES * 3 });
  });

  test('the extension ignores folders of either slash', () => {
    assert.equal(uploadedFromBytes('a.dir\\b/c\\photo.JPG', SAMPLES.jpeg).extension, 'jpg');
    assert.equal(uploadedFromBytes('.bashrc', SAMPLES.text).extension, '');
  });
});
