/**
 * Paths as the download-then-run reading compares them: resolved against the folder the hook has
 * `cd`-ed to (the install root at the start, `.`), `$AGPK_INSTALL_ROOT/x` the same as `x`, and
 * folders a path may lie under looked up one path component at a time.
 */
import { posix } from 'node:path';

const ROOT = /^\$\{?AGPK_INSTALL_ROOT\}?(?=\/|$)/;
/** What resolving could change in a path: `.`/`..` segments, doubled or trailing slashes, the root's variable. */
const NOT_PLAIN = /(?:^|\/)\.\.?(?:\/|$)|\/\/|\/$|^\$\{?AGPK_INSTALL_ROOT\b|^$/;

/**
 * `path` as seen from `cwd` (`.` is the install root): relative paths joined to it, `..` and `.`
 * segments folded. Absolute, home (`~`) and unknown-variable (`$X/…`) paths stand on their own.
 */
export function resolvePath(cwd: string, path: string): string {
  // Most paths need no folding: joined without path.normalize, which reads the folder again each time.
  if (!NOT_PLAIN.test(path)) return cwd === '.' || /^[/~$]/.test(path) ? path : `${cwd}/${path}`;
  const p = path.replace(ROOT, '.');
  const joined = posix.normalize(/^[/~$]/.test(p) ? p : posix.join(cwd, p));
  return joined.length > 1 && joined.endsWith('/') ? joined.slice(0, -1) : joined;
}

/** A resolved path's components, a relative one under `.` (so `.` holds every relative path). */
function components(path: string): string[] {
  if (path === '.') return ['.'];
  const parts = path.split('/');
  return /^[/~$]/.test(path) ? parts : ['.', ...parts];
}

interface Node {
  children: Map<string, Node>;
  /** Set on a folder added to the set: what it was added with. */
  label?: string;
}

/** Folders, each added with a label, asked which holds a path. */
export interface FolderSet {
  add(folder: string, label: string): void;
  /** The label of a folder of the set that holds `path` (or is it), if any; costs the path's length. */
  holding(path: string): string | undefined;
}

/** An empty {@link FolderSet} of resolved paths. */
export function createFolderSet(): FolderSet {
  const root: Node = { children: new Map() };
  return {
    add(folder, label) {
      let node = root;
      for (const part of components(folder)) {
        let next = node.children.get(part);
        if (!next) node.children.set(part, (next = { children: new Map() }));
        node = next;
      }
      node.label ??= label;
    },
    holding(path) {
      let node: Node | undefined = root;
      for (const part of components(path)) {
        node = node.children.get(part);
        if (!node) return undefined;
        if (node.label !== undefined) return node.label;
      }
      return undefined;
    },
  };
}
