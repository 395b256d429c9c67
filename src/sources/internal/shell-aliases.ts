/**
 * Shell aliases for the scan: `alias get='curl -fsSL'` then `get u | sh` runs `curl -fsSL u`
 * (sh/dash expand aliases in scripts; bash once `shopt -s expand_aliases`, which the scan assumes).
 * An alias is expanded where a command's name stands, from the line after its definition on, as
 * the shell does; `unalias` forgets it. Nothing is run.
 */
import { parseCommands } from './shell-words.ts';

/** An alias value longer than this is not recorded (a real one is a command and a few options). */
const VALUE_LIMIT = 4096;
/** A word that may be an alias's name, where a command's name stands. */
const NAME = /[^\s;&|()<>'"`$\\]+/y;
/** What may follow a name for it to be the whole word. */
const WORD_END = /[\s;&|()<>]/;
/** Words after which the next word is a command's name again (keywords, assignments are told apart by their `=`). */
const KEYWORDS = new Set(['then', 'do', 'else', 'elif', 'if', 'while', 'until', '!', '{', 'time']);
/** Characters after which a command starts (a backquote opens or closes a substitution; `$(` ends in `(`). */
const STARTS = new Set([';', '&', '|', '(', ')', '\n', '`']);

/** A hook's aliases, fed its shell lines in order. */
export interface ShellAliases {
  /** `text` with aliases expanded where a command's name stands. */
  expand(text: string): string;
  /** Records the `alias`/`unalias` commands of a line (as it will be read: variables substituted). */
  record(text: string): void;
}

/**
 * Aliases for one hook; `budget` bounds the characters all expansions together may add (past it
 * names read as themselves), so a line of many uses of a long alias costs no more than the budget.
 */
export function createShellAliases(budget: number): ShellAliases {
  const aliases = new Map<string, string>();
  let left = budget;

  /** The alias at `text[i]`, a command's name, and where it ends; undefined when the word there is none. */
  const aliasAt = (text: string, i: number): { value: string | undefined; word: string; end: number } | undefined => {
    NAME.lastIndex = i;
    const m = NAME.exec(text);
    if (!m) return undefined;
    const end = i + m[0].length;
    const whole = end === text.length || WORD_END.test(text[end]!);
    return { value: whole ? aliases.get(m[0]) : undefined, word: m[0], end };
  };

  function expand(text: string): string {
    if (aliases.size === 0) return text;
    let out = '';
    let from = 0;
    let start = true;
    let double = false;
    for (let i = 0; i < text.length;) {
      const c = text[i]!;
      if (start && !double) {
        if (c === ' ' || c === '\t') {
          i++;
          continue;
        }
        const found = aliasAt(text, i);
        if (found) {
          if (found.value !== undefined && (left -= found.value.length) >= 0) {
            out += text.slice(from, i) + found.value;
            from = found.end;
            // A value ending in a blank makes the next word a command's name too, as in the shell.
            start = /\s$/.test(found.value);
          } else start = KEYWORDS.has(found.word) || found.word.includes('=');
          i = found.end;
          continue;
        }
        start = false;
      }
      if (c === '\\') i += 2;
      else if (double) {
        const opens = c === '$' && text[i + 1] === '(';
        if (c === '"') double = false;
        else if (c === '`' || opens) start = true;
        i += opens ? 2 : 1;
      } else if (c === "'") {
        const end = text.indexOf("'", i + 1);
        i = end < 0 ? text.length : end + 1;
      } else {
        if (c === '"') double = true;
        else if (STARTS.has(c)) start = true;
        i++;
      }
    }
    return out + text.slice(from);
  }

  function record(text: string): void {
    if (!/\b(?:un)?alias\b/.test(text)) return;
    for (const { words } of parseCommands(text)) {
      if (words[0] === 'unalias') {
        if (words.includes('-a')) aliases.clear();
        for (const name of words.slice(1)) aliases.delete(name);
      }
      if (words[0] !== 'alias') continue;
      for (const w of words.slice(1)) {
        const eq = w.indexOf('=');
        if (eq <= 0) continue;
        const name = w.slice(0, eq);
        const value = w.slice(eq + 1);
        // An alias of an alias is read as what the first one stood for when the second was made.
        const first = aliasAt(value, 0);
        const resolved = first?.value === undefined ? value : first.value + value.slice(first.end);
        if (resolved.length <= VALUE_LIMIT) aliases.set(name, resolved);
        else aliases.delete(name);
      }
    }
  }

  return { expand, record };
}
