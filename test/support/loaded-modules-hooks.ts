/** The loader hook of loaded-modules.ts: appends the URL of every ES module resolved to the file. */
import { appendFileSync } from 'node:fs';

let file = '';

export function initialize(data: { file: string }): void {
  file = data.file;
}

export async function resolve(
  specifier: string,
  context: unknown,
  next: (specifier: string, context: unknown) => Promise<{ url: string }>,
): Promise<{ url: string }> {
  const resolved = await next(specifier, context);
  appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
