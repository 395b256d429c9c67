/**
 * A rough shell tokenizer for the scan: enough to read which command runs on which file, not a
 * shell. Quotes are honoured and removed, `${NAME}` reads as `$NAME`; expansions are not done.
 */

/** Characters that are part of a word wherever they are (all but blanks, quotes, redirections, separators). */
const ORDINARY = /[^\s"'<>&;|()`]+/y;

/** Separators between simple commands (outside quotes). */
const SEPARATORS = new Set([';', '&', '|', '(', ')', '`', '\n']);

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
}

/** Splits one line into simple commands, each a list of words; redirections are words of their own (`>`, `>>`, `<`, `&>`, `2>`). */
export function shellCommands(line: string): string[][] {
  return parseCommands(line).map((c) => c.words);
}

/** {@link shellCommands} with what separates each command from the one before it, and the here-documents it opens. */
export function parseCommands(line: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let words: string[] = [];
  let heredocs: Heredoc[] = [];
  let word: string | undefined;
  let quoted = false;
  let quote: '"' | "'" | undefined;
  let after = '';
  // Set by `<<`: the next word is a here-document's delimiter.
  let opening: { strip: boolean } | undefined;
  const endWord = (): void => {
    if (word !== undefined && opening) heredocs.push({ delimiter: word.replaceAll('\\', ''), quoted: quoted || word.includes('\\'), strip: opening.strip });
    else if (word !== undefined) words.push(word.includes('${') ? word.replace(/\$\{(\w+)\}/g, '$$$1') : word);
    if (word !== undefined) opening = undefined;
    word = undefined;
    quoted = false;
  };
  const endCommand = (separator: string): void => {
    endWord();
    if (words.length > 0 || heredocs.length > 0) commands.push({ words, after, heredocs });
    words = [];
    heredocs = [];
    opening = undefined;
    after = separator;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      // The quoted text up to the closing quote in one piece (a character at a time is slow on long words).
      const end = line.indexOf(quote, i);
      word = (word ?? '') + line.slice(i, end < 0 ? line.length : end);
      i = end < 0 ? line.length : end;
      quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
      quoted = true;
      word ??= '';
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
    } else if (c === '>' || (c === '<' && line[i + 1] !== '(')) {
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
    } else if (SEPARATORS.has(c)) {
      // `||` and `&&` are one separator, so a command after `||` is not read as fed by a pipe.
      const double = (c === '|' || c === '&') && line[i + 1] === c;
      if (double) i++;
      endCommand(double ? c + c : c);
    } else if (/\s/.test(c)) {
      endWord();
    } else {
      // The run of ordinary characters in one piece, as quoted text is (`<` of `<(` alone).
      ORDINARY.lastIndex = i;
      const end = ORDINARY.test(line) ? ORDINARY.lastIndex : i + 1;
      word = (word ?? '') + line.slice(i, end);
      i = end - 1;
    }
  }
  endCommand('');
  return commands;
}

/** Words that only prefix the command that follows them (`sudo`, `env X=1`, `then`…). */
const PREFIXES = /^(?:then|do|else|elif|if|while|until|!|exec|command|nohup|time|env|sudo|doas|nice)$/;

/** The command's own words: leading keywords, wrappers and `NAME=value` assignments dropped. */
export function commandWords(words: readonly string[]): string[] {
  let i = 0;
  while (i < words.length && (PREFIXES.test(words[i]!) || /^[A-Za-z_]\w*=/.test(words[i]!) || (i > 0 && /^-/.test(words[i]!) && PREFIXES.test(words[i - 1]!)))) i++;
  return words.slice(i);
}

/** A path as the scan compares it: `./x` and `x` are the same file. */
export function samePath(path: string): string {
  return path.replace(/^(?:\.\/)+/, '');
}
