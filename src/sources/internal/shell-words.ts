/**
 * A rough shell tokenizer for the scan: enough to read which command runs on which file, not a
 * shell. Quotes are honoured and removed, `${NAME}` reads as `$NAME`; expansions are not done.
 * A command substitution (`$(…)`, `` `…` ``) or process substitution (`<(…)`, `>(…)`) stays whole
 * in its word, in double quotes too, and its code is given beside the command, to be read in turn.
 */
import { ansiQuoteEnd } from './ansi-quotes.ts';
import { findActions, REDIRECTION } from './run-words.ts';

/** How deep the scan reads substitutions, `eval`s, `sh -c` codes and function calls inside each other. */
export const MAX_NESTING = 4;

/** Characters that are part of a word wherever they are (all but blanks, quotes, redirections, separators, and a `$` that opens `$(` or `$"`). */
const ORDINARY = /(?:[^\s"'<>&;|()`$]|\$(?![("]))+/y;
/** Text in double quotes up to its end, a backslash, a backtick or a `$`. */
const DOUBLE_QUOTED = /[^"\\`$]+/y;
/** `${NAME}`, read as `$NAME`. */
const BRACED = /\$\{\w+\}/y;

/** Separators between simple commands (outside quotes). */
const SEPARATORS = new Set([';', '&', '|', '(', ')', '\n']);

/** A substitution in a word: the shell runs `code` and puts its output (`$(…)`, backticks) or a file name for it (`<(…)`, `>(…)`) there. */
export interface Substitution {
  kind: '$(' | '`' | '<(' | '>(';
  code: string;
  /** The word it is part of (its index in the command's `words`). */
  word: number;
  /** Where its text (opener to closer) lies in that word. */
  start: number;
  end: number;
}

/**
 * One character inside double quotes (the top of `stack`): the closing quote pops it, a backquote
 * or `$(` opens a substitution. Returns the index to go on from (past the `(` of `$(`).
 */
function inDoubleQuotes(line: string, i: number, stack: string[]): number {
  const c = line[i];
  if (c === '"') stack.pop();
  else if (c === '`') stack.push('`');
  else if (c === '$' && line[i + 1] === '(') {
    stack.push(')');
    return i + 1;
  }
  return i;
}

/** The index of the quote closing the single-quoted text opened at `i` (the line's end if none). */
function singleQuoteEnd(line: string, i: number): number {
  const end = line.indexOf("'", i + 1);
  return end < 0 ? line.length : end;
}

/**
 * The index just past the end of the substitution whose code starts at `from` (`close` ends it),
 * or one past the line's length when the line ends first. Nested substitutions, parentheses, quotes and
 * backslashes are followed on one stack, so the text costs its length once.
 */
export function substitutionEnd(line: string, from: number, close: ')' | '`'): number {
  const stack: string[] = [close];
  for (let i = from; i < line.length; i++) {
    const c = line[i]!;
    const top = stack.at(-1);
    if (c === '\\') i++;
    else if (top === '"') i = inDoubleQuotes(line, i, stack);
    else if (c === "'") i = singleQuoteEnd(line, i);
    else if (c === '"') stack.push('"');
    else if (c === '(') stack.push(')');
    else if (c === '`' && top !== '`') stack.push('`');
    else if (c === top) stack.pop();
    if (stack.length === 0) return i + 1;
  }
  return line.length + 1;
}

/**
 * Whether a shell line goes on on the next one: it ends in a backslash (`'backslash'`: the shell
 * drops it and the newline), or inside a command or process substitution or an array's
 * parentheses (`'open'`: the newline is a separator in it). `stack` holds the closers left open by
 * the lines before (empty at first) and is updated; a line that does not go on empties it (a
 * double quote left open alone is not followed). One pass over the line.
 */
export function goesOn(line: string, stack: string[]): 'backslash' | 'open' | undefined {
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    const top = stack.at(-1);
    if (c === '\\') {
      if (i === line.length - 1) return 'backslash';
      i++;
    } else if (top === '"') i = inDoubleQuotes(line, i, stack);
    else if (c === '$' && line[i + 1] === "'") i = ansiQuoteEnd(line, i + 2);
    else if (c === "'") i = singleQuoteEnd(line, i);
    else if (c === '"') stack.push('"');
    else if (c === '`') {
      if (top === '`') stack.pop();
      else stack.push('`');
    } else if ((c === '$' || c === '<' || c === '>') && line[i + 1] === '(') {
      stack.push(')');
      i++;
    } else if (c === '(') {
      if (stack.length > 0 || isArrayOpener(line, i)) stack.push(')');
    } else if (c === ')' && top === ')') stack.pop();
  }
  if (stack.some((s) => s !== '"')) return 'open';
  stack.length = 0;
  return undefined;
}

/** Whether the `(` at `at` opens an array (`name=(`, `name+=(`); looks back over the name only. */
function isArrayOpener(line: string, at: number): boolean {
  let i = at - 1;
  if (line[i] !== '=') return false;
  if (line[i - 1] === '+') i--;
  let start = i;
  while (start > 0 && /\w/.test(line[start - 1]!)) start--;
  return start < i && /[A-Za-z_]/.test(line[start]!);
}

/** A here-document a command opens (`<<EOF`, `<<-'EOF'`): its body is the lines after this one, up to the delimiter. */
export interface Heredoc {
  delimiter: string;
  /** Any part of the delimiter quoted or escaped: the body is taken as it is, not expanded. */
  quoted: boolean;
  /** `<<-`: leading tabs are cut from the body's lines and from the delimiter's. */
  strip: boolean;
}

/** One simple command of a line. */
export interface ShellCommand {
  /** Its words; a here-document's `<<` and delimiter are in `heredocs` instead, a here-string is the word `<<<` and the next. */
  words: string[];
  /** What separates it from the command before it on the line (`|` for the right side of a pipe, `||`, `;`, `&&`…); `''` first on the line. */
  after: string;
  heredocs: Heredoc[];
  /** The substitutions in its words, in the order they come (the shell runs them before the command). */
  substitutions: Substitution[];
  /** A command a `find` before it runs on the files it finds (see foundRuns), not words of the line. */
  found?: true;
  /** How many subshells (`(`) open right before it, and close (`)`) right after it: `( a; b ) | sh` feeds `sh` what both print. */
  opens?: number;
  closes?: number;
}

/**
 * The commands a `find` runs (`find a -name x -exec sh {} \;`), each after it as a command of its
 * own, once for each folder it searches, on the file it finds there (see findActions: `a/x`, or
 * `a/{}`): so every reading of commands reads them too (a file run, code given to `sh -c`, a write
 * outside the root). The first carries the substitutions in its words (the shell runs them once).
 * Not piped: `find`'s output is not their input. Only commands of the line are expanded, so a
 * `find` run by a `find` is not read again (nested, each would re-read the rest of the line).
 */
function foundRuns(words: readonly string[], substitutions: readonly Substitution[]): ShellCommand[] {
  if (!words.some((w) => w.endsWith('find'))) return [];
  const own = commandWords(words);
  if (own[0]?.slice(own[0].lastIndexOf('/') + 1) !== 'find') return [];
  // Offset of find's arguments in the command's words.
  const offset = words.length - own.length + 1;
  const runs: ShellCommand[] = [];
  for (const { start, end, found } of findActions(own.slice(1))) {
    if (end === start) continue;
    const command = own.slice(1 + start, 1 + end);
    const inWords = substitutions
      .filter((s) => s.word >= offset + start && s.word < offset + end)
      .map((s) => ({ ...s, word: s.word - offset - start }));
    for (const [k, file] of found.entries()) {
      runs.push({
        words: command.map((w) => (w === '{}' ? file : w)),
        after: ';',
        heredocs: [],
        substitutions: k === 0 ? inWords : [],
        found: true,
      });
    }
  }
  return runs;
}

/** Splits one line into simple commands, each a list of words (as written: no command a `find` runs); redirections are words of their own (`>`, `>>`, `<`, `&>`, `2>`). */
export function shellCommands(line: string): string[][] {
  return parseCommands(line)
    .filter((c) => !c.found)
    .map((c) => c.words);
}

/** {@link shellCommands} with what separates each command from the one before it, and the here-documents and substitutions it holds. */
export function parseCommands(line: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let words: string[] = [];
  let heredocs: Heredoc[] = [];
  let substitutions: Substitution[] = [];
  // The substitutions of the word being read (`word` is set when it is pushed).
  let pending: Substitution[] = [];
  let word: string | undefined;
  let quoted = false;
  let quote: '"' | "'" | undefined;
  let after = '';
  // Set by `<<`: the next word is a here-document's delimiter.
  let opening: { strip: boolean } | undefined;
  // Inside an array assignment's parentheses (`a=(x y)`): one word up to its `)`, blanks read as one space.
  let array = false;
  // Subshells opened since the last command (an empty `()`, a function's, opens none), and the last command of the line itself.
  let opens = 0;
  let last: ShellCommand | undefined;
  /** Text of the word as written (`${NAME}` read as `$NAME`); substitutions are added by `substitution`. */
  const append = (text: string): void => {
    word = (word ?? '') + (text.includes('${') ? text.replace(/\$\{(\w+)\}/g, '$$$1') : text);
  };
  const endWord = (): void => {
    if (word !== undefined && opening)
      heredocs.push({
        delimiter: word.replaceAll('\\', ''),
        quoted: quoted || word.includes('\\'),
        strip: opening.strip,
      });
    else if (word !== undefined) {
      for (const s of pending) substitutions.push({ ...s, word: words.length });
      words.push(word);
    }
    if (word !== undefined) opening = undefined;
    word = undefined;
    pending = [];
    quoted = false;
  };
  const endCommand = (separator: string): void => {
    endWord();
    const ended = words.length > 0 || heredocs.length > 0;
    if (ended) {
      commands.push((last = { words, after, heredocs, substitutions, ...(opens > 0 ? { opens } : {}) }));
      opens = 0;
    }
    if (words.length > 0) commands.push(...foundRuns(words, substitutions));
    words = [];
    heredocs = [];
    substitutions = [];
    opening = undefined;
    if (separator === '(') opens++;
    else if (separator === ')') {
      if (opens > 0) opens--;
      else if (last) last.closes = (last.closes ?? 0) + 1;
    }
    // A parenthesis alone is no separator between two commands: `a | ( b )` still pipes a into b.
    if (ended || (separator !== '(' && separator !== ')')) after = separator;
  };
  /** Reads the substitution opened at `i` (`$(`, a backtick, `<(`, `>(`) into the word; answers the index of its last character. */
  const substitution = (i: number, kind: Substitution['kind']): number => {
    const open = kind === '`' ? 1 : 2;
    // Past the line's end when it ends inside the substitution (a here-document's opener, say): the rest is its code.
    const end = substitutionEnd(line, i + open, kind === '`' ? '`' : ')');
    const start = word?.length ?? 0;
    word = (word ?? '') + line.slice(i, end);
    // `$((…))` is arithmetic, not code.
    if (!(kind === '$(' && line[i + 2] === '('))
      pending.push({ kind, code: line.slice(i + open, end - 1), word: -1, start, end: word.length });
    return end - 1;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      // The quoted text up to the closing quote in one piece (a character at a time is slow on long words).
      const end = line.indexOf(quote, i);
      append(line.slice(i, end < 0 ? line.length : end));
      i = end < 0 ? line.length : end;
      quote = undefined;
    } else if (quote === '"') {
      // Plain text up to the next quote, backslash, backtick or `$` in one piece; a substitution in it is read as one.
      DOUBLE_QUOTED.lastIndex = i;
      if (DOUBLE_QUOTED.test(line)) {
        append(line.slice(i, DOUBLE_QUOTED.lastIndex));
        i = DOUBLE_QUOTED.lastIndex - 1;
      } else if (c === '"') quote = undefined;
      else if (c === '\\') {
        const next = line[i + 1] ?? '';
        append('"\\$`'.includes(next) && next !== '' ? next : c + next);
        i++;
      } else if (c === '`') i = substitution(i, '`');
      else if (c === '$' && line[i + 1] === '(') i = substitution(i, '$(');
      else {
        BRACED.lastIndex = i;
        const braced = BRACED.exec(line);
        append(braced ? braced[0] : c);
        if (braced) i = BRACED.lastIndex - 1;
      }
    } else if (c === '"' || c === "'") {
      quote = c;
      quoted = true;
      word ??= '';
    } else if (c === '$' && line[i + 1] === '"') {
      // `$"…"` is a double-quoted (translated) string; `$'…'` was decoded into a plain one by plainQuotes.
      quote = '"';
      quoted = true;
      word ??= '';
      i++;
    } else if (c === '`') {
      i = substitution(i, '`');
    } else if (c === '$' && line[i + 1] === '(') {
      i = substitution(i, '$(');
    } else if ((c === '<' || c === '>') && line[i + 1] === '(') {
      i = substitution(i, c === '<' ? '<(' : '>(');
    } else if (array && (c === ')' || /\s/.test(c) || ';&|<>('.includes(c))) {
      // An array's elements are not commands: its blanks and metacharacters stay in the one word.
      if (c === ')') array = false;
      if (!/\s/.test(c) || !word!.endsWith(' ')) append(/\s/.test(c) ? ' ' : c);
    } else if (c === '(' && word !== undefined && !quoted && pending.length === 0 && /^[A-Za-z_]\w*\+?=$/.test(word)) {
      array = true;
      append(c);
    } else if (c === '<' && line[i + 1] === '<') {
      endWord();
      if (line[i + 2] === '<') {
        words.push('<<<');
        i += 2;
      } else {
        const strip = line[i + 2] === '-';
        i += strip ? 2 : 1;
        opening = { strip };
      }
    } else if (c === '>' || c === '<') {
      // `2>` and `&>` keep their prefix; `>>` is one word; `>&2` duplicates a descriptor (no file).
      const prefix = word !== undefined && /^\d$/.test(word) ? word : '';
      if (prefix) word = undefined;
      endWord();
      const double = line[i + 1] === c;
      if (double) i++;
      words.push(`${prefix}${c}${double ? c : ''}`);
      if (line[i + 1] === '&') i++;
    } else if (c === '&' && line[i + 1] === '>') {
      endWord();
      words.push('&>');
      i++;
      if (line[i + 1] === '>') i++;
    } else if (c === '|' && line[i + 1] === '&') {
      // `|&` pipes standard error too: a pipe.
      i++;
      endCommand('|');
    } else if (SEPARATORS.has(c)) {
      // `||` and `&&` are one separator, so a command after `||` is not read as fed by a pipe.
      const double = (c === '|' || c === '&') && line[i + 1] === c;
      if (double) i++;
      endCommand(double ? c + c : c);
    } else if (/\s/.test(c)) {
      endWord();
    } else {
      // The run of ordinary characters in one piece, as quoted text is.
      ORDINARY.lastIndex = i;
      const end = ORDINARY.test(line) ? ORDINARY.lastIndex : i + 1;
      append(line.slice(i, end));
      i = end - 1;
    }
  }
  endCommand('');
  return commands;
}

/**
 * The commands of a line and, before each, those of the substitutions in its words, to `depth`
 * levels of nesting ({@link MAX_NESTING} in all): every command the line runs, as far as the scan reads.
 */
export function allCommands(line: string, depth = 0): ShellCommand[] {
  const out: ShellCommand[] = [];
  for (const command of parseCommands(line)) {
    if (depth < MAX_NESTING) for (const s of command.substitutions) out.push(...allCommands(s.code, depth + 1));
    out.push(command);
  }
  return out;
}

/** Keywords that only prefix the command that follows them (`then`, a group's `{`, `!`…). */
const KEYWORDS = new Set(['then', 'do', 'else', 'elif', 'if', 'while', 'until', '!', '{']);

/**
 * Commands that run the command after their own options and operands (`timeout 60 curl …`,
 * `xargs -n 1 curl …`, `sudo -u nobody sh t`): the options that take the next word as their value,
 * and how many operands come before the command.
 */
const RUNNERS = new Map<string, { valued: RegExp; operands: number }>([
  ['exec', { valued: /^-a$/, operands: 0 }],
  ['command', { valued: /^$/, operands: 0 }],
  ['time', { valued: /^-[fo]$|^--(?:format|output)$/, operands: 0 }],
  ['nohup', { valued: /^$/, operands: 0 }],
  ['env', { valued: /^-[uCS]$|^--(?:unset|chdir|split-string)$/, operands: 0 }],
  [
    'sudo',
    {
      valued:
        /^-[ugpCDhrtTRU]$|^--(?:user|group|prompt|close-from|chdir|host|role|type|command-timeout|chroot|other-user)$/,
      operands: 0,
    },
  ],
  ['doas', { valued: /^-[uC]$/, operands: 0 }],
  ['nice', { valued: /^-n$|^--adjustment$/, operands: 0 }],
  ['timeout', { valued: /^-[sk]$|^--(?:signal|kill-after)$/, operands: 1 }],
  [
    'xargs',
    {
      valued:
        /^-[nLIdEsPa]$|^--(?:max-args|max-lines|replace|delimiter|eof|max-chars|max-procs|arg-file|process-slot-var)$/,
      operands: 0,
    },
  ],
  ['stdbuf', { valued: /^-[ioe]$|^--(?:input|output|error)$/, operands: 0 }],
  ['setsid', { valued: /^$/, operands: 0 }],
  ['ionice', { valued: /^-[cnp]$|^--(?:class|classdata|pid)$/, operands: 0 }],
  ['chrt', { valued: /^-T$|^-[PD]$|^--sched-(?:runtime|period|deadline)$/, operands: 1 }],
  ['taskset', { valued: /^$/, operands: 1 }],
  ['busybox', { valued: /^$/, operands: 0 }],
]);

/**
 * The command's own words: leading keywords, `NAME=value` assignments and runners (with their
 * options and operands, see RUNNERS) dropped. A runner given nothing to run (or only redirections) stays the command.
 */
export function commandWords(words: readonly string[]): string[] {
  let i = 0;
  while (i < words.length) {
    const word = words[i]!;
    if (KEYWORDS.has(word) || /^[A-Za-z_]\w*=/.test(word)) {
      i++;
      continue;
    }
    const runner = RUNNERS.get(word.includes('/') ? word.slice(word.lastIndexOf('/') + 1) : word);
    if (runner === undefined) break;
    let j = i + 1;
    while (j < words.length && words[j]!.startsWith('-')) {
      if (words[j] === '--') {
        j++;
        break;
      }
      j += runner.valued.test(words[j]!) ? 2 : 1;
    }
    j += runner.operands;
    // `env > f`, `exec 3<>/dev/tcp/h/p`: a runner given only redirections runs nothing; they are its own.
    if (j >= words.length || REDIRECTION.test(words[j]!)) break;
    i = j;
  }
  return words.slice(i);
}

/** A command's substitutions by the word they are in. */
export function byWord(substitutions: readonly Substitution[]): Map<number, Substitution[]> {
  const out = new Map<number, Substitution[]>();
  for (const s of substitutions) {
    const list = out.get(s.word);
    if (list) list.push(s);
    else out.set(s.word, [s]);
  }
  return out;
}

/** `word` as the command receives it: the substitutions (`subs`, its own) the shell ran for it stand as a plain placeholder. */
export function asValue(word: string, subs: readonly Substitution[] | undefined): string {
  let out = '';
  let from = 0;
  for (const s of subs ?? []) {
    out += `${word.slice(from, s.start)}_`;
    from = s.end;
  }
  return subs === undefined ? word : out + word.slice(from);
}

/** A path as the scan compares it: `./x` and `x` are the same file. */
export function samePath(path: string): string {
  return path.replace(/^(?:\.\/)+/, '');
}
