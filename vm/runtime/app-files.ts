/**
 * The files of an app folder: its route files, found by a walk that stays inside the app. A
 * folder reached through a symbolic link is followed only when it lies inside the app and is not
 * one of the folders holding the link (a link to `..` would loop); any other link, and one that
 * leads nowhere, is skipped with one warning naming it, never an internal error.
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { DIAG } from '../errors.js';
import { diagnostic, type Diagnostic } from '../diagnostics.js';

/** Folders never searched for route files nor watched: dependencies, rvm's own data, version control, secrets. */
export const SKIPPED_FOLDERS = new Set(['node_modules', '.rvm', '.git', '.secrets']);

/** The `.rvm` files of an app, relative with `/` separators and sorted, and the warnings of the walk. */
export interface RouteFiles {
  files: string[];
  warnings: Diagnostic[];
}

/** True when `path` is `folder` or inside it (both real paths). */
function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/**
 * Why the folder link at `path` is not followed, or null when it leads to a folder inside `root`
 * that holds none of the folders being walked (`walking`, real paths: following it would loop).
 */
function linkProblem(root: string, path: string, walking: readonly string[]): string | null {
  let target: string;
  try {
    target = realpathSync(path);
  } catch {
    return 'it leads nowhere';
  }
  if (!within(target, root)) return `it leads outside the app (to ${target})`;
  if (walking.some((folder) => within(folder, target))) return 'it leads to a folder that holds it (the walk would loop)';
  return null;
}

/** Lists the `.rvm` files under `dir`, relative with `/` separators, sorted. */
export function findRouteFiles(dir: string): RouteFiles {
  const files: string[] = [];
  const warnings: Diagnostic[] = [];
  const root = realpathSync(dir);
  const skip = (rel: string, why: string) =>
    warnings.push(
      diagnostic(
        DIAG.W_LINK_SKIPPED,
        `the symbolic link '${rel}' is not followed: ${why}`,
        { file: rel, line: 1, col: 1 },
        { severity: 'warning', hint: 'move the files into the app, or remove the link' },
      ),
    );
  // `rel` is the folder relative to `dir` with `/` separators ('' at the root); `walking` the real
  // paths of it and the folders holding it; the directory entries carry their type, so only a
  // symbolic link costs a stat.
  const walking: string[] = [];
  const walk = (folder: string, real: string, rel: string) => {
    walking.push(real);
    const entries = readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const name = entry.name;
      const path = join(folder, name);
      if (entry.isSymbolicLink()) {
        let isDirectory: boolean;
        try {
          isDirectory = statSync(path).isDirectory();
        } catch {
          if (name.endsWith('.rvm')) skip(rel + name, 'it leads nowhere');
          continue;
        }
        if (!isDirectory) {
          if (name.endsWith('.rvm')) files.push(rel + name);
          continue;
        }
        if (SKIPPED_FOLDERS.has(name) || name.startsWith('.')) continue;
        const problem = linkProblem(root, path, walking);
        if (problem === null) walk(path, realpathSync(path), `${rel}${name}/`);
        else skip(rel + name, problem);
      } else if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(name) && !name.startsWith('.')) walk(path, join(real, name), `${rel}${name}/`);
      } else if (name.endsWith('.rvm')) {
        files.push(rel + name);
      }
    }
    walking.pop();
  };
  walk(dir, root, '');
  return { files, warnings };
}
