/**
 * Simple shell variables for the scan, read in the order a hook's lines come: `NAME=value` alone
 * (or after `export`/`readonly`/`local`/`declare`/`typeset`) is recorded, and a later `$NAME` or
 * `${NAME}` outside single quotes reads as the recorded value. Nothing is run or evaluated. A value
 * holding a command substitution, another kind of expansion, a quote, a blank or a shell
 * metacharacter is forgotten (its name then reads as itself), so a substituted value never
 * changes how a line splits into commands and words; nor does a name a command sets (`read`,
 * `for`, `unset`) keep an older value. A value with blanks or metacharacters (`c="curl -o t u"`) is
 * kept apart, for the code an `eval` builds of it (`evaluated`) only.
 */
import { shellCommands } from './shell-words.ts';

/** A value longer than any path (PATH_MAX) or URL a hook would use is not recorded. */
const VALUE_LIMIT = 4096;
const NAME = /[A-Za-z_]\w*/y;
const BRACED = /\{([A-Za-z_]\w*)\}/y;
/** Where substitution may start or a command may end (outside quotes). */
const SPECIAL = /[$'"\\;&|()`]/g;
/** A command that only assigns: checked once at a command's start before it is split into words. */
const ASSIGNS = /^\s*(?:(?:export|readonly|local|declare|typeset)(?:\s+-\w+)*\s+)?[A-Za-z_]\w*\+?=/;
const KEYWORD = /^(?:export|readonly|local|declare|typeset)$/;
const UNSAFE = /[\s'"`;&|<>()\\]|\$(?![A-Za-z_])/;
/** A value the scan cannot know at all: a command substitution (or the part of one before `(`). */
const OPAQUE = /`|\$(?![A-Za-z_{])/;
/** Commands that set (or unset) the names they are given to values the scan does not know. */
const SETTERS = /^(?:read|unset|for|getopts|mapfile|readarray)$/;

/** A hook's variables, fed its lines in order. */
export interface ShellVars {
  /** A shell line with known variables substituted; its assignments are recorded as it goes. */
  line(text: string): string;
  /** Text the shell expands without reading quotes or commands in it (an unquoted here-document's body): substituted only. */
  text(text: string): string;
  /** A shell line as `eval` reads the strings built into it: values with blanks or metacharacters substituted too; nothing recorded. */
  evaluated(text: string): string;
}

/**
 * Variables for one hook. `budget` bounds the characters all substitutions together may add
 * (past it names read as themselves), so a chain of doubling assignments or a line of many
 * references to a long value costs no more than the budget.
 */
export function createShellVars(budget: number): ShellVars {
  const vars = new Map<string, string>();
  // Values a substitution would re-split (blanks, quotes, metacharacters): read by `evaluated` alone.
  const strings = new Map<string, string>();
  let left = budget;

  /** The value and end of the reference at `text[at]` (a `$`), if it is known and affordable. */
  function lookup(text: string, at: number, all: boolean): [value: string, end: number] | undefined {
    BRACED.lastIndex = at + 1;
    const braced = BRACED.exec(text);
    NAME.lastIndex = at + 1;
    const bare = braced ? null : NAME.exec(text);
    const name = braced ? braced[1]! : bare?.[0];
    const value = name === undefined ? undefined : (vars.get(name) ?? (all ? strings.get(name) : undefined));
    if (value === undefined || value.length > left) return undefined;
    left -= value.length;
    return [value, braced ? BRACED.lastIndex : NAME.lastIndex];
  }

  function set(name: string, value: string | undefined): void {
    vars.delete(name);
    strings.delete(name);
    if (value === undefined || value.length > VALUE_LIMIT || OPAQUE.test(value)) return;
    (UNSAFE.test(value) ? strings : vars).set(name, value);
  }

  /** Records what one command (already substituted) assigns or unsets. */
  function record(command: string): void {
    const setter = /^\s*(\w+)/.exec(command)?.[1];
    if (setter !== undefined && SETTERS.test(setter)) {
      const names = (shellCommands(command)[0] ?? []).slice(1).filter((w) => /^[A-Za-z_]\w*$/.test(w));
      for (const name of setter === 'for' ? names.slice(0, 1) : names) set(name, undefined);
      return;
    }
    if (!ASSIGNS.test(command)) return;
    const words = shellCommands(command)[0] ?? [];
    let i = KEYWORD.test(words[0] ?? '') ? 1 : 0;
    while (i < words.length && words[i]!.startsWith('-')) i++;
    const assignments: [name: string, append: boolean, value: string][] = [];
    for (const w of words.slice(i)) {
      const m = /^([A-Za-z_]\w*)(\+?)=/.exec(w);
      // `NAME=v cmd` sets NAME for cmd alone; a keyword's bare `NAME` changes no value.
      if (!m) {
        if (i > 0 && /^[A-Za-z_]\w*$/.test(w)) continue;
        return;
      }
      assignments.push([m[1]!, m[2] === '+', w.slice(m[0].length)]);
    }
    for (const [name, append, value] of assignments) {
      const before = vars.get(name) ?? strings.get(name);
      set(name, append ? (before === undefined ? undefined : before + value) : value);
    }
  }

  /**
   * `text` with known variables substituted; a shell line (`line`, `evaluated`) honours quotes, a
   * `line` records its commands' assignments, an `evaluated` one substitutes the values kept apart too.
   */
  function substitute(text: string, mode: 'line' | 'text' | 'evaluated'): string {
    const line = mode !== 'text';
    if (vars.size === 0 && (mode === 'text' || (mode === 'line' ? !text.includes('=') : strings.size === 0))) return text;
    let out = '';
    let from = 0;
    let command = 0;
    let double = false;
    SPECIAL.lastIndex = 0;
    for (let m = SPECIAL.exec(text); m; m = SPECIAL.exec(text)) {
      const at = m.index;
      const c = m[0];
      if (c === '\\') {
        SPECIAL.lastIndex = at + 2;
      } else if (c === '$') {
        const found = lookup(text, at, mode === 'evaluated');
        if (!found) continue;
        out += text.slice(from, at) + found[0];
        from = SPECIAL.lastIndex = found[1];
      } else if (!line) {
        continue;
      } else if (c === "'" && !double) {
        const end = text.indexOf("'", at + 1);
        SPECIAL.lastIndex = end < 0 ? text.length : end + 1;
      } else if (c === '"') {
        double = !double;
      } else if (!double && mode === 'line') {
        out += text.slice(from, at);
        from = at;
        record(out.slice(command));
        command = out.length + 1;
      }
    }
    out += text.slice(from);
    if (mode === 'line') record(out.slice(command));
    return out;
  }

  return { line: (text) => substitute(text, 'line'), text: (text) => substitute(text, 'text'), evaluated: (text) => substitute(text, 'evaluated') };
}
