/**
 * Generates the code tables of spec/errors.md from the error catalogue (vm/errors.ts): one block
 * a family, between markers, while the prose around them is written by hand.
 * `node dist/tools/gen-errors-doc.js` rewrites the blocks; test/spec/errors-doc.test.ts fails
 * when the committed page differs from the rendering.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ERROR_CATALOGUE, type ErrorEntry, type ErrorFamily, type HttpErrorEntry } from '../vm/errors.js';
import { markdownTable, tableCell } from './markdown-table.js';

/** Where the page lives (this module runs from dist/tools/). */
export const ERRORS_DOC_PATH = fileURLToPath(new URL('../../spec/errors.md', import.meta.url));

/** The generated blocks, in page order: one a family. */
export const ERROR_BLOCKS: readonly ErrorFamily[] = ['diagnostic', 'artefact', 'plugin', 'runtime', 'http'];

/** The row of an error status without a code of its own (`defaultErrorCode` in vm/http-status.ts). */
const FALLBACK_HTTP_ROW = ['`http_<status>`', 'other', "`fail` with a status that has no named code, e.g. `fail 418 '…'` answers `http_418`"];

/** The line that opens a family's block. */
export function blockStart(family: ErrorFamily): string {
  return `<!-- generated from vm/errors.ts (${family}) by tools/gen-errors-doc.ts: edit the catalogue, then run \`node dist/tools/gen-errors-doc.js\` -->`;
}

/** The line that closes a family's block. */
export function blockEnd(family: ErrorFamily): string {
  return `<!-- end of generated (${family}) -->`;
}

function code(entry: ErrorEntry): string {
  return `\`${entry.code}\``;
}

/** The lines of a family's block. */
export function renderBlock(family: ErrorFamily): string[] {
  const entries = ERROR_CATALOGUE.filter((e) => e.family === family);
  switch (family) {
    case 'diagnostic': {
      const sections = [...new Set(entries.map((e) => e.section ?? ''))];
      return sections.flatMap((section, i) => [
        ...(i > 0 ? [''] : []),
        `### ${section}`,
        '',
        ...markdownTable(
          ['code', 'meaning', 'example'],
          entries.filter((e) => (e.section ?? '') === section).map((e) => [code(e), tableCell(e.doc), tableCell(e.example ?? '')]),
        ),
      ]);
    }
    case 'http':
      return markdownTable(
        ['code', 'status', 'produced by'],
        [...(entries as HttpErrorEntry[]).map((e) => [code(e), String(e.status), tableCell(e.doc)]), FALLBACK_HTTP_ROW],
      );
    case 'runtime':
      return markdownTable(
        ['code', 'raised when'],
        entries.map((e) => [code(e), tableCell(e.doc)]),
      );
    default:
      return markdownTable(
        ['code', 'meaning'],
        entries.map((e) => [code(e), tableCell(e.doc)]),
      );
  }
}

/** The page with every block rendered anew; throws when a block's markers are missing or out of order. */
export function renderErrorsDoc(page: string): string {
  let out = page;
  for (const family of ERROR_BLOCKS) {
    const start = out.indexOf(blockStart(family));
    const end = out.indexOf(blockEnd(family));
    if (start < 0 || end < start)
      throw new Error(`spec/errors.md has no generated block for ${family}: it needs the lines '${blockStart(family)}' and '${blockEnd(family)}'`);
    const from = start + blockStart(family).length;
    out = `${out.slice(0, from)}\n${renderBlock(family).join('\n')}\n${out.slice(end)}`;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(ERRORS_DOC_PATH, renderErrorsDoc(readFileSync(ERRORS_DOC_PATH, 'utf8')));
  console.log(`wrote ${ERRORS_DOC_PATH}`);
}
