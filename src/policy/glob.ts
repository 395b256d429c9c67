/**
 * Glob patterns of policy rules: `*` matches any run of characters (none included), `?` exactly one,
 * every other character itself. Matched without regular expressions and without backtracking: the
 * pattern is split at its stars into segments, the first must match at the start, the last at the
 * end, and each one between at its leftmost place after the one before (the leftmost place leaves
 * the most room for the rest, so no other choice needs trying). A match takes at most
 * |name| × |segment| character comparisons per segment, whatever the pattern: `*a*a*a*…b` against a
 * long run of `a`s, exponential for a backtracking regex, is as cheap as any other.
 */

/** A compiled pattern: whether it matches a name. */
export type GlobMatcher = (name: string) => boolean;

const ANY: GlobMatcher = () => true;

/** Whether `segment` (literal characters and `?`) matches `name` at `at`. Code units, as names are compared. */
function segmentAt(name: string, at: number, segment: string): boolean {
  if (at + segment.length > name.length) return false;
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (c !== 63 /* ? */ && c !== name.charCodeAt(at + i)) return false;
  }
  return true;
}

/** The leftmost index >= `from` where `segment` matches `name` (at most `last`), or -1. */
function findSegment(name: string, from: number, last: number, segment: string): number {
  if (!segment.includes('?')) {
    const at = name.indexOf(segment, from);
    return at !== -1 && at <= last ? at : -1;
  }
  for (let at = from; at <= last; at++) if (segmentAt(name, at, segment)) return at;
  return -1;
}

/** Compiles a glob pattern (see the module's comment). */
export function compileGlob(pattern: string): GlobMatcher {
  if (/^\*+$/.test(pattern)) return ANY;
  if (!pattern.includes('*')) {
    if (!pattern.includes('?')) return (name) => name === pattern;
    return (name) => name.length === pattern.length && segmentAt(name, 0, pattern);
  }
  // Runs of stars are one star.
  const segments = pattern.split('*');
  const head = segments[0]!;
  const tail = segments[segments.length - 1]!;
  const middle = segments.slice(1, -1).filter((s) => s !== '');
  const fixed = head.length + tail.length + middle.reduce((n, s) => n + s.length, 0);
  return (name) => {
    if (name.length < fixed) return false;
    if (!segmentAt(name, 0, head)) return false;
    const end = name.length - tail.length;
    if (!segmentAt(name, end, tail)) return false;
    let at = head.length;
    for (const segment of middle) {
      const found = findSegment(name, at, end - segment.length, segment);
      if (found === -1) return false;
      at = found + segment.length;
    }
    return true;
  };
}
