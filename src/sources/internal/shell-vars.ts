/**
 * Simple shell variables for the scan, read in the order a hook's lines come: `NAME=value` alone
 * (or after `export`/`readonly`/`local`/`declare`/`typeset`) is recorded, and a later `$NAME` or
 * `${NAME}` outside single quotes reads as the recorded value. Nothing is run or evaluated. A value
 * holding a command substitution, another kind of expansion, a quote, a blank or a shell
 * metacharacter is forgotten (its name then reads as itself), except one that says where a command
 * is (`$(command -v node)`, `which`, `type -p`: recorded as that command's name), so a substituted value never
 * changes how a line splits into commands and words; nor does a name a command sets (`read`,
 * `for`, `unset`) keep an older value. A value with blanks or metacharacters (`c="curl -o t u"`) is
 * kept apart, for the code an `eval` builds of it (`evaluated`), and for a reference outside
 * double quotes, which the shell splits at its blanks as the value would be split here (when it
 * holds no quote or metacharacter). Parameter expansions are read as the shell reads them where the
 * scan can (`${a:-w}`, `${a:=w}`, `${a:+w}`, `${a#p}`/`##`/`%`/`%%` with a literal pattern or one
 * `*` at the cut end, `${a/p/r}`/`//`, `${a^^}`/`${a,,}`, `${#a}`): an unknown name with a default
 * reads as the default, and with an alternative as the alternative (the text the hook wrote is what
 * is vetted). Arrays of plain words (`a=(x y)`, `a+=(z)`, also over lines) are recorded, and
 * `${a[@]}`, `${a[*]}`, `${a[n]}`, `$a`, `${#a[@]}` read as the shell reads them (`"${a[@]}"` one
 * word per element); an array with a word holding blanks or metacharacters is not guessed.
 * An unquoted `$IFS`/`${IFS}` reads as a blank (its expansion is split away: `curl${IFS}u`), and
 * once the hook sets IFS to other characters (`IFS=,`) an unquoted expansion is split at them too
 * (`c=curl,-fsSL,u; $c` is three words); an assignment's value is not split.
 */
import { shellCommands, substitutionEnd } from './shell-words.ts';

/** A value longer than any path (PATH_MAX) or URL a hook would use is not recorded. */
const VALUE_LIMIT = 4096;
const NAME = /[A-Za-z_]\w*/y;
/**
 * `${…}` after its `$`: a length or indirection mark, the name, an index, an operator and its word
 * (which may hold `$x` and one level of `${…}`). Each part stops at a fixed character, so a
 * reference costs the text up to the next brace.
 */
const BRACED =
  /\{([#!]?)([A-Za-z_]\w*)(?:\[(@|\*|\d+)\])?(?:(:?[-=+?]|##?|%%?|\/\/?|\^\^?|,,?)((?:[^{}$]|\$\{[^{}]*\}|\$(?!\{))*))?\}/y;
/** Where substitution may start or a command may end (outside quotes). */
const SPECIAL = /[$'"\\;&|()`\n]/g;
/** A value that cannot stand in a line as it is: it would end a command or open a quote or substitution there. */
const UNSPLITTABLE = /[\n'"`;&|<>()\\]|\$(?![A-Za-z_{])/;
/** A pattern with glob characters (only one `*` at the end the cut starts from is read). */
const GLOB = /[*?[]/;
/** A command that only assigns: checked once at a command's start before it is split into words. */
const ASSIGNS = /^\s*(?:(?:export|readonly|local|declare|typeset)(?:\s+-\w+)*\s+)?[A-Za-z_]\w*\+?=/;
const KEYWORD = /^(?:export|readonly|local|declare|typeset)$/;
const UNSAFE = /[\s'"`;&|<>()\\]|\$(?![A-Za-z_])/;
/** A value the scan cannot know at all: a command substitution (or the part of one before `(`). */
const OPAQUE = /`|\$(?![A-Za-z_{])/;
/**
 * A value that is where a command is (`"$(command -v node)"`, `$(which x)`, `` `type -p x` ``): as a
 * command name it runs that command, so it is recorded as the command's name.
 */
const WHERE_IS = /^("?)(?:\$\(|`)\s*(?:command\s+-v|which|type\s+-[pP])\s+([\w.+-]+)\s*(?:\)|`)\1$/;
/** `$(command -v x)` (`which x`, `type -p x`) where it starts, and in backquotes, as a whole value (nothing joined after it): the command's name. */
const WHERE_IS_SUBSTITUTION = /\$\(\s*(?:command\s+-v|which|type\s+-[pP])\s+([\w.+-]+)\s*\)(?=[\s;&|)]|$)/y;
const WHERE_IS_BACKQUOTED = /`\s*(?:command\s+-v|which|type\s+-[pP])\s+([\w.+-]+)\s*`(?=[\s;&|)]|$)/y;
/** A command that so far is an assignment up to its value's start (`P=$`, `export H=`), with the name. */
const ASSIGNED_BEFORE = /^\s*(?:(?:export|readonly|local|declare|typeset)(?:\s+-\w+)*\s+)?([A-Za-z_]\w*)=\$?$/;
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
  // Arrays of plain words; null for one whose words the scan does not know.
  const arrays = new Map<string, string[] | null>();
  let left = budget;

  /** The words a name holds (one for a scalar) at `index`, if known and readable in this mode; null if it is set to what cannot be read here. */
  function wordsOf(name: string, index: string | undefined, all: boolean): string[] | null | undefined {
    if (arrays.has(name)) {
      const array = arrays.get(name)!;
      if (array === null) return null;
      return index === '@' || index === '*' ? array : [array[Number(index ?? 0)] ?? ''];
    }
    const value = vars.get(name) ?? (all ? strings.get(name) : undefined);
    if (value === undefined) return strings.has(name) ? null : undefined;
    return index === undefined || index === '@' || index === '*' || index === '0' ? [value] : [''];
  }

  /** `value` cut by a `#`/`##`/`%`/`%%` pattern, if the pattern is literal or one `*` at the end the cut starts from. */
  function cut(value: string, op: string, pattern: string): string | undefined {
    const prefix = op[0] === '#';
    const longest = op.length === 2;
    const star = prefix ? pattern.startsWith('*') : pattern.endsWith('*');
    const literal = star ? (prefix ? pattern.slice(1) : pattern.slice(0, -1)) : pattern;
    if (GLOB.test(literal)) return undefined;
    if (!star)
      return prefix
        ? value.startsWith(literal)
          ? value.slice(literal.length)
          : value
        : value.endsWith(literal)
          ? value.slice(0, value.length - literal.length)
          : value;
    if (prefix) {
      const at = longest ? value.lastIndexOf(literal) : value.indexOf(literal);
      return at < 0 ? value : value.slice(at + literal.length);
    }
    const at = longest ? value.indexOf(literal) : value.lastIndexOf(literal);
    return at < 0 ? value : value.slice(0, at);
  }

  /** `value` with a `/`/`//` replacement (`word` is `pattern/replacement`), if the pattern is literal. */
  function replace(value: string, op: string, word: string): string | undefined {
    const slash = word.indexOf('/');
    let pattern = slash < 0 ? word : word.slice(0, slash);
    const by = slash < 0 ? '' : word.slice(slash + 1);
    const anchor = op === '/' && (pattern[0] === '#' || pattern[0] === '%') ? pattern[0] : undefined;
    if (anchor) pattern = pattern.slice(1);
    if (GLOB.test(pattern) || pattern === '') return undefined;
    if (anchor === '#') return value.startsWith(pattern) ? by + value.slice(pattern.length) : value;
    if (anchor === '%') return value.endsWith(pattern) ? value.slice(0, value.length - pattern.length) + by : value;
    return op === '//' ? value.split(pattern).join(by) : value.replace(pattern, () => by);
  }

  /** The words of `${…}` (its parts as `BRACED` reads them), or undefined when the scan leaves it as written. */
  function expand(
    mark: string,
    name: string,
    index: string | undefined,
    op: string | undefined,
    rawWord: string,
    mode: Mode,
  ): string[] | undefined {
    if (mark === '!') return undefined;
    const held = wordsOf(name, index, mode === 'evaluated');
    if (held === null) return undefined;
    if (mark === '#')
      return held === undefined
        ? undefined
        : [String(index === '@' || index === '*' ? held.length : held.join(' ').length)];
    if (op === undefined) return held;
    const word = (): string => substitute(rawWord, 'text');
    const set = held !== undefined && (op.startsWith(':') ? held.join(' ') !== '' : true);
    switch (op) {
      case '-':
      case ':-':
        return set ? held : [word()];
      case '=':
      case ':=': {
        if (set) return held;
        const value = word();
        if (mode === 'line') assign(name, value);
        return [value];
      }
      case '+':
      case ':+':
        // An unknown name may well be set where the hook runs: its alternative is read.
        return held === undefined || set ? [word()] : [''];
      case '?':
      case ':?':
        return set ? held : undefined;
      default: {
        if (held === undefined) return undefined;
        const out: string[] = [];
        for (const value of held) {
          const next =
            op[0] === '#' || op[0] === '%'
              ? cut(value, op, word())
              : op[0] === '/'
                ? replace(value, op, word())
                : rawWord !== ''
                  ? undefined
                  : op === '^^'
                    ? value.toUpperCase()
                    : op === ',,'
                      ? value.toLowerCase()
                      : op === '^'
                        ? value.charAt(0).toUpperCase() + value.slice(1)
                        : value.charAt(0).toLowerCase() + value.slice(1);
          if (next === undefined) return undefined;
          out.push(next);
        }
        return out;
      }
    }
  }

  // The pattern of the last IFS value asked about, kept while IFS holds it.
  let splitting: { ifs: string; pattern: RegExp | undefined } | undefined;
  /** The characters other than blanks the hook set IFS to (`IFS=,`), as a pattern: the shell splits an unquoted expansion at them too. */
  function splitters(): RegExp | undefined {
    const ifs = vars.get('IFS') ?? strings.get('IFS');
    if (ifs === undefined) return undefined;
    if (splitting?.ifs !== ifs) {
      const chars = [...new Set(ifs.replace(/\s/g, ''))].map((c) => `\\u{${c.codePointAt(0)!.toString(16)}}`).join('');
      splitting = { ifs, pattern: chars === '' ? undefined : new RegExp(`[${chars}]`, 'gu') };
    }
    return splitting.pattern;
  }

  /** The text standing for the reference at `text[at]` (a `$`) and its end, if it is known and affordable. */
  function lookup(text: string, at: number, mode: Mode, double: boolean): [value: string, end: number] | undefined {
    BRACED.lastIndex = at + 1;
    const braced = BRACED.exec(text);
    let words: string[] | undefined;
    let end: number;
    let all = false;
    // Split where it stands (outside double quotes, not an assignment's value, which is not split).
    const split = mode === 'line' && !double && text[at - 1] !== '=';
    // `$IFS`, `${IFS}` unquoted: whatever IFS holds, the expansion splits away, so it reads as a blank (`curl${IFS}u`).
    if (
      split &&
      (braced
        ? braced[2] === 'IFS' && !braced[1] && braced[3] === undefined && braced[4] === undefined
        : text.startsWith('IFS', at + 1) && !/\w/.test(text[at + 4] ?? ''))
    ) {
      return [' ', braced ? BRACED.lastIndex : at + 4];
    }
    if (braced) {
      end = BRACED.lastIndex;
      words = expand(braced[1]!, braced[2]!, braced[3], braced[4], braced[5] ?? '', mode);
      all = braced[3] === '@';
    } else {
      NAME.lastIndex = at + 1;
      const bare = NAME.exec(text);
      if (!bare) return undefined;
      end = NAME.lastIndex;
      const held = wordsOf(bare[0], undefined, mode === 'evaluated');
      // A reference outside double quotes is split at its blanks by the shell, as it would be here.
      const split = held === null && !double && mode === 'line' ? strings.get(bare[0]) : undefined;
      words = split !== undefined && !UNSPLITTABLE.test(split) ? [split] : (held ?? undefined);
    }
    if (words === undefined) return undefined;
    // `"${a[@]}"`: a word per element, its quotes closed and opened between them.
    const value = words.join(all && double ? '" "' : ' ');
    if (value.length > left || (mode !== 'evaluated' && words.some((w) => UNSPLITTABLE.test(w)))) return undefined;
    left -= value.length;
    // `IFS=,` then `$c` of `c=curl,-fsSL,u`: the shell splits it into three words.
    const ifs = split ? splitters() : undefined;
    return [ifs === undefined ? value : value.replace(ifs, ' '), end];
  }

  function assign(name: string, value: string | undefined): void {
    vars.delete(name);
    strings.delete(name);
    arrays.delete(name);
    if (value === undefined || value.length > VALUE_LIMIT) return;
    const where = WHERE_IS.exec(value)?.[2];
    if (where !== undefined) {
      vars.set(name, where);
      return;
    }
    if (OPAQUE.test(value)) return;
    (UNSAFE.test(value) ? strings : vars).set(name, value);
  }

  /** Records an array assignment (`inner` is the text between its parentheses, substituted). */
  function assignArray(name: string, append: boolean, inner: string): void {
    const words = shellCommands(inner).flat();
    const before = arrays.get(name);
    const known =
      words.every((w) => w.length <= VALUE_LIMIT && !UNSAFE.test(w) && !OPAQUE.test(w)) && (!append || before !== null);
    vars.delete(name);
    strings.delete(name);
    arrays.set(name, known ? [...(append ? (before ?? []) : []), ...words] : null);
  }

  /** Records what one command (already substituted) assigns or unsets. */
  function record(command: string): void {
    const setter = /^\s*(\w+)/.exec(command)?.[1];
    if (setter !== undefined && SETTERS.test(setter)) {
      const names = (shellCommands(command)[0] ?? []).slice(1).filter((w) => /^[A-Za-z_]\w*$/.test(w));
      for (const name of setter === 'for' ? names.slice(0, 1) : names) assign(name, undefined);
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
      // An array was recorded where its parentheses were read.
      if (value.startsWith('(')) continue;
      const before = vars.get(name) ?? strings.get(name);
      assign(name, append ? (before === undefined ? undefined : before + value) : value);
    }
  }

  /** The name and `+` of an array assignment whose `(` is at `text[at]`, looking back over the name only. */
  function arrayName(text: string, at: number): [name: string, append: boolean] | undefined {
    let i = at - 1;
    if (text[i] !== '=') return undefined;
    const append = text[i - 1] === '+';
    if (append) i--;
    let start = i;
    while (start > 0 && /\w/.test(text[start - 1]!)) start--;
    return start < i && /[A-Za-z_]/.test(text[start]!) ? [text.slice(start, i), append] : undefined;
  }

  /**
   * `text` with known variables substituted; a shell line (`line`, `evaluated`, `inner`) honours
   * quotes, a `line` records its commands' assignments (arrays where their parentheses are read),
   * an `evaluated` one substitutes the values kept apart too; `inner` is an array's words.
   */
  function substitute(text: string, mode: Mode): string {
    const line = mode !== 'text';
    if (
      vars.size === 0 &&
      arrays.size === 0 &&
      !text.includes('${') &&
      (mode === 'text' ||
        mode === 'inner' ||
        (mode === 'line' ? !text.includes('=') && !text.includes('$IFS') : strings.size === 0))
    )
      return text;
    let out = '';
    let from = 0;
    /**
     * The current command's text so far (what follows the last command's end, not counting its
     * separator): kept apart from `out`, whose slicing would flatten all of it at every command.
     */
    let command = '';
    /** Characters of the next piece that are the separator ending the last command. */
    let skip = 0;
    const put = (piece: string) => {
      out += piece;
      if (skip > 0 && piece.length > 0) {
        command += piece.slice(skip);
        skip = 0;
      } else command += piece;
    };
    let double = false;
    SPECIAL.lastIndex = 0;
    for (let m = SPECIAL.exec(text); m; m = SPECIAL.exec(text)) {
      const at = m.index;
      const c = m[0];
      if (c === '\\') {
        SPECIAL.lastIndex = at + 2;
      } else if (c === '$') {
        const found = lookup(text, at, mode, double);
        // A default's word is substituted with this same pattern: its place is set again.
        if (!found) {
          SPECIAL.lastIndex = at + 1;
          continue;
        }
        put(text.slice(from, at) + found[0]);
        from = SPECIAL.lastIndex = found[1];
      } else if (!line) {
        continue;
      } else if (c === "'" && !double) {
        const end = text.indexOf("'", at + 1);
        SPECIAL.lastIndex = end < 0 ? text.length : end + 1;
      } else if (c === '"') {
        double = !double;
      } else if (c === '(' && !double && mode !== 'inner' && arrayName(text, at)) {
        // An array's words are read (substituted) as such; its parentheses end no command.
        const [name, append] = arrayName(text, at)!;
        const end = Math.min(substitutionEnd(text, at + 1, ')'), text.length);
        const inner = substitute(text.slice(at + 1, text[end - 1] === ')' ? end - 1 : end), 'inner');
        if (mode === 'line') assignArray(name, append, inner);
        put(`${text.slice(from, at)}(${inner}${text[end - 1] === ')' ? ')' : ''}`);
        from = SPECIAL.lastIndex = end;
      } else if (!double && mode === 'line') {
        put(text.slice(from, at));
        from = at;
        // An unquoted substitution that is an assignment's value (`P=$(which python3)`, `H=\`cat f\``)
        // makes it the name of the command it locates, or a value not known; not what precedes it.
        const opens = c === '`' || (c === '(' && text[at - 1] === '$');
        const name = opens ? ASSIGNED_BEFORE.exec(command)?.[1] : undefined;
        if (name !== undefined) {
          // Read where it starts only (not to its end, which nested ones would read again and again).
          const where = c === '`' ? WHERE_IS_BACKQUOTED : WHERE_IS_SUBSTITUTION;
          where.lastIndex = c === '`' ? at : at - 1;
          assign(name, where.exec(text)?.[1]);
        } else record(command);
        command = '';
        skip = 1;
      }
    }
    put(text.slice(from));
    if (mode === 'line') record(command);
    return out;
  }

  return {
    line: (text) => substitute(text, 'line'),
    text: (text) => substitute(text, 'text'),
    evaluated: (text) => substitute(text, 'evaluated'),
  };
}

/** How `substitute` reads a text: see there. */
type Mode = 'line' | 'text' | 'evaluated' | 'inner';
