/** Markdown tables for the generated pages of spec/ (natives, error codes). */

/** Escapes a table cell: a pipe would split it, a line break would end the row. */
export function tableCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** A table: its header row, the separator and one row a line; an empty cell stays empty. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const row = (cells: readonly string[]): string => `|${cells.map((c) => (c === '' ? ' ' : ` ${c} `)).join('|')}|`;
  return [row(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(row)];
}
