/**
 * A hook as the scan reads it, one text per line of the hook: comments cut, and simple shell
 * variables assigned on earlier lines (or earlier on the same line) substituted, so the rules see
 * `curl -o "$f"` as the path `f` holds. See `createShellVars` for what counts as simple.
 */
import { createShellVars } from './internal/shell-vars.ts';

/** Substitutions may add up to this much text to a small hook, and up to its own size to a larger one. */
const MIN_SUBSTITUTION_BUDGET = 64 * 1024;

/** The hook's lines (comments already cut) as the rules read them, index for index. */
export function readHook(code: readonly string[]): string[] {
  const size = code.reduce((n, line) => n + line.length + 1, 0);
  const vars = createShellVars(Math.max(MIN_SUBSTITUTION_BUDGET, size));
  return code.map((line) => vars.line(line));
}
