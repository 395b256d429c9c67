/**
 * A hook as the scan reads it, one record per line of the hook: comments cut, ANSI-C quoting
 * (`$'\x63url'`) decoded, aliases defined earlier expanded (see `createShellAliases`), simple shell
 * variables assigned earlier substituted (see `createShellVars`), and here-documents followed —
 * the body of one fed to an interpreter (`bash <<EOF`, `python3 - <<'EOF'`, `cat <<EOF | sh`) is
 * code of that interpreter, the body of one written to a file (`cat > x.sh <<EOF`, `tee x.sh`)
 * is remembered as a download when it downloads, so running the file later is download-then-run.
 */
import { posix } from 'node:path';

import { plainQuotes } from './internal/ansi-quotes.ts';
import { filesRun, inlineCode, type Language, languageOf, stdinProgram } from './internal/run-words.ts';
import { createShellAliases } from './internal/shell-aliases.ts';
import { createShellVars } from './internal/shell-vars.ts';
import {
  commandWords,
  goesOn,
  type Heredoc,
  MAX_NESTING,
  parseCommands,
  type ShellCommand,
  type Substitution,
} from './internal/shell-words.ts';
import { PROGRAM_MARKS } from './program-rules.ts';

/** Substitutions may add up to this much text to a small hook, and up to its own size to a larger one. */
const MIN_SUBSTITUTION_BUDGET = 64 * 1024;
/** The most lines, and characters, one shell command spread over lines (`x=$(` … `)`, `\\` at ends) is read as: past either it is read line by line. */
const MAX_JOINED_LINES = 256;
const MAX_JOINED_CHARS = 64 * 1024;
/** A here-document's opener (`<<`, not a here-string's `<<<`): a line with one is not joined to the next. */
const HEREDOC_OPENER = /(?<!<)<<(?!<)/;
/** Redirections that send a command's standard output to a file. */
const STDOUT_TO = /^(?:1?>>?|&>>?)$/;
/**
 * A body that downloads: a download command at the start of a command (not `git fetch`), or a
 * program's download call. Each alternative is a fixed prefix, so a line costs its length.
 */
const DOWNLOADS =
  /(?:^|[;&|(`]|\$\(|\b(?:then|do|else|if|sudo|exec|command)\s)\s*(?:curl|wget|fetch)\b|\b(?:urlopen|urlretrieve|DownloadFile|DownloadString)\b|\b(?:requests|httpx)\.get\s*\(|\bhttps?\.get\s*\(|\bfetch\s*\(|\bInvoke-WebRequest\b/;

/** A program language other than the hook's own shell. */
export type ProgramLanguage = Exclude<Language, 'shell'>;

/** One line of a hook as the rules read it. */
export interface HookLine {
  /** The line as the rules read it: comment cut, known shell variables substituted. */
  text: string;
  /** Code of this language too (a here-document fed to its interpreter); `unit` tells one program from the next. */
  program?: { language: ProgramLanguage; unit: number };
  /** In the body of an unquoted here-document fed to an interpreter: the outer shell expands `$(…)` in it into the code. */
  expandedCode?: true;
  /** Files this line's commands (by index in `parseCommands`) write from here-documents whose bodies download. */
  writesDownloads?: Map<number, string[]>;
  /** A line with `eval`, as the code it evaluates is built: variables holding blanks or metacharacters (`c="curl -o t u"`) substituted too. */
  evaluated?: string;
  /** In the body of a here-document nothing runs (written to a file, or read as data): text, not commands. */
  data?: true;
  /** How many lines after this one it takes in (one command spread over lines); their own records are empty. */
  span?: number;
  /**
   * Names this line assigns a here-document's body (`code="$(cat <<'EOF'` … `EOF` … `)"`), with the
   * languages in which that body, read as a program, downloads and evaluates code.
   */
  captures?: Map<string, ProgramLanguage[]>;
}

/** Who reads a here-document's body: a shell, another interpreter, or nobody that runs it (written to `files`, or read as data). */
type Reader = { kind: 'shell' } | { kind: 'program'; language: ProgramLanguage } | { kind: 'data'; files: string[] };

/** Lines read in one place: the hook itself, or a here-document's body, with the here-documents its lines opened. */
interface Context {
  queue: Frame[];
  next: number;
}

interface Frame extends Context {
  /** The name its body is assigned to (`x="$(cat <<EOF`), and the program marks its lines have shown so far. */
  captures?: string;
  marks?: { downloads: Set<ProgramLanguage>; evaluates: Set<ProgramLanguage> };
  delimiter: string;
  quoted: boolean;
  strip: boolean;
  reader: Reader;
  unit: number;
  downloads: boolean;
  opener: HookLine;
  command: number;
}

/** Who reads the here-documents of each command of a line: the command itself, or what it pipes into. */
function readers(commands: readonly ShellCommand[]): Reader[] {
  const out: Reader[] = [];
  for (let k = commands.length - 1; k >= 0; k--) {
    const words = commandWords(commands[k]!.words);
    const language = stdinProgram(words);
    const files = commands[k]!.words.filter((w, j, all) => j > 0 && STDOUT_TO.test(all[j - 1]!));
    if (posix.basename(words[0] ?? '') === 'tee') files.push(...words.slice(1).filter((w) => !w.startsWith('-')));
    if (language === 'shell') out[k] = { kind: 'shell' };
    else if (language !== undefined) out[k] = { kind: 'program', language };
    else if (files.length > 0) out[k] = { kind: 'data', files };
    else out[k] = commands[k + 1]?.after === '|' ? out[k + 1]! : { kind: 'data', files: [] };
  }
  return out;
}

/** The reader of a shell or another language. */
function readerOf(language: Language): Reader {
  return language === 'shell' ? { kind: 'shell' } : { kind: 'program', language };
}

/**
 * Who reads the output of each substitution of a command (`words` its words): the shell for an
 * `eval`'s argument, the interpreter of a `sh -c`/`python3 -c` code, of a here-string
 * (`bash <<< "$(…)"`), or of a script given as `<(…)`; undefined when it is a value like any other.
 * The command is read once, so each substitution costs no more than its own place.
 */
function substitutionReaders(words: readonly string[]): (s: Substitution) => Reader | undefined {
  const own = commandWords(words);
  const offset = words.length - own.length;
  const inline = inlineCode(own);
  const base = posix.basename(own[0] ?? '');
  const hereString = own.includes('<<<')
    ? stdinProgram(own.filter((w, k) => w !== '<<<' && own[k - 1] !== '<<<'))
    : undefined;
  const script = filesRun(own)[1]?.path;
  const language = base === 'source' || base === '.' ? 'shell' : languageOf(base);
  return (s) => {
    const j = s.word - offset;
    if (j < 1) return undefined;
    if (base === 'eval') return { kind: 'shell' };
    if (inline?.at === j) return readerOf(inline.language);
    if (own[j - 1] === '<<<' && hereString !== undefined) return readerOf(hereString);
    return s.kind === '<(' && language !== undefined && script === own[j] ? readerOf(language) : undefined;
  };
}

/** A here-document a line opens, with who reads its body and the command (by index on the line; -1 inside a substitution) that opens it. */
interface Opened {
  heredoc: Heredoc;
  reader: Reader;
  command: number;
  /** The name a body printed into an assignment's substitution is assigned to. */
  captures?: string;
}

/**
 * The here-documents `commands` open, in order, those inside their substitutions (`"$(cat <<EOF`)
 * included, `depth` levels deep: a body that is a substitution's output is read by whoever reads that output.
 */
function opened(commands: readonly ShellCommand[], depth: number, outer?: Reader): Opened[] {
  const who = readers(commands);
  const out: Opened[] = [];
  commands.forEach((command, k) => {
    let readerFor: ((s: Substitution) => Reader | undefined) | undefined;
    for (const s of depth < MAX_NESTING ? command.substitutions : []) {
      if (!s.code.includes('<<')) continue;
      readerFor ??= substitutionReaders(command.words);
      const reader = readerFor(s);
      // `x="$(cat <<EOF`: the body printed is the value of x, run (or not) where x is used.
      const name =
        reader === undefined && depth === 0 ? /^([A-Za-z_]\w*)=/.exec(command.words[s.word] ?? '')?.[1] : undefined;
      for (const o of opened(parseCommands(s.code), depth + 1, reader)) {
        const printed = name !== undefined && o.reader.kind === 'data' && o.reader.files.length === 0;
        out.push({ ...o, command: -1, ...(printed ? { captures: name } : {}) });
      }
    }
    // A body printed to the output (`cat <<EOF` with no file) of a substitution goes where the substitution's output goes.
    const reader =
      outer !== undefined && who[k]!.kind === 'data' && who[k]!.files.length === 0 && commands[k + 1]?.after !== '|'
        ? outer
        : who[k]!;
    for (const heredoc of command.heredocs) out.push({ heredoc, reader, command: k });
  });
  return out;
}

const EXTENSIONS: Record<string, ProgramLanguage> = {
  '.py': 'python',
  '.js': 'node',
  '.mjs': 'node',
  '.cjs': 'node',
  '.ts': 'node',
  '.mts': 'node',
  '.pl': 'perl',
  '.rb': 'ruby',
  '.php': 'php',
};

/** The language of a hook that is not shell, by its `#!` line (`#!/usr/bin/env python3`) or else its extension. */
export function hookLanguage(file: string, firstLine: string): ProgramLanguage | undefined {
  const shebang = /^#!\s*(\S+)(?:\s+(?:-S\s+)?(\S+))?/.exec(firstLine);
  const program = shebang ? (posix.basename(shebang[1]!) === 'env' ? shebang[2] : shebang[1]) : undefined;
  const language = program === undefined ? EXTENSIONS[posix.extname(file).toLowerCase()] : languageOf(program);
  return language === 'shell' ? undefined : language;
}

/**
 * The hook's lines as the rules read them, index for index; `code` is `raw` with comments cut. A
 * hook in another `language` is that language's code throughout (one program), read as written.
 */
export function readHook(raw: readonly string[], code: readonly string[], language?: ProgramLanguage): HookLine[] {
  if (language) return code.map((text) => ({ text, program: { language, unit: 1 } }));
  const size = code.reduce((n, line) => n + line.length + 1, 0);
  const vars = createShellVars(Math.max(MIN_SUBSTITUTION_BUDGET, size));
  const aliases = createShellAliases(Math.max(MIN_SUBSTITUTION_BUDGET, size));
  const out: HookLine[] = [];
  const top: Context = { queue: [], next: 0 };
  // The bodies being read, outermost first; a line equal to a delimiter ends the outermost such body (its shell reads it verbatim).
  const active: Frame[] = [];
  // The depth of the outermost body being read that each delimiter (and, `<<-`, each tab-stripped one) ends: a deeper one of the same delimiter ends with it.
  const depths = { exact: new Map<string, number>(), stripped: new Map<string, number>() };
  let units = 0;

  const activate = (context: Context): void => {
    const frame = context.queue[context.next++];
    if (!frame) return;
    for (const map of frame.strip ? [depths.exact, depths.stripped] : [depths.exact])
      if (!map.has(frame.delimiter)) map.set(frame.delimiter, active.length);
    active.push(frame);
  };
  const close = (depth: number): void => {
    while (active.length > depth) {
      const frame = active.pop()!;
      for (const map of [depths.exact, depths.stripped])
        if (map.get(frame.delimiter) === active.length) map.delete(frame.delimiter);
      if (frame.captures !== undefined) {
        const languages = [...frame.marks!.downloads].filter((l) => frame.marks!.evaluates.has(l));
        (frame.opener.captures ??= new Map()).set(frame.captures, languages);
      }
      if (frame.downloads && frame.reader.kind === 'data' && frame.reader.files.length > 0) {
        const writes = (frame.opener.writesDownloads ??= new Map());
        writes.set(frame.command, [...(writes.get(frame.command) ?? []), ...frame.reader.files]);
      }
    }
    activate(depth === 0 ? top : active[depth - 1]!);
  };
  /** The depth of the outermost body this line ends, if it ends one. */
  const ending = (line: string): number | undefined => {
    const exact = depths.exact.get(line);
    const stripped = line.startsWith('\t') ? depths.stripped.get(line.replace(/^\t+/, '')) : undefined;
    return exact === undefined ? stripped : stripped === undefined ? exact : Math.min(exact, stripped);
  };
  /** Queues the here-documents a shell line opens, read from the next line on. */
  const open = (line: HookLine, context: Context): void => {
    if (!line.text.includes('<<')) return;
    const frames: Frame[] = opened(parseCommands(line.text), 0).map(({ heredoc, reader, command, captures }) => ({
      ...heredoc,
      reader,
      unit: ++units,
      downloads: false,
      opener: line,
      command,
      queue: [],
      next: 0,
      ...(captures === undefined ? {} : { captures, marks: { downloads: new Set(), evaluates: new Set() } }),
    }));
    if (frames.length === 0) return;
    context.queue = frames;
    context.next = 0;
    activate(context);
  };

  // A line before which no command is joined (past a join given up), and the last line a join took in.
  let noJoinUntil = -1;
  let joinedUntil = -1;
  /**
   * The command that starts on shell line `i` and goes on over the lines after it (an open
   * `$(`, backticks or array, a `\\` at the end), joined as the shell reads it; undefined when it
   * does not go on, or meets a here-document or a delimiter or the limits first (then the lines
   * it went over are read one by one, none starting a join: each line is looked at once here).
   */
  const joined = (i: number): { text: string; last: number } | undefined => {
    const stack: string[] = [];
    let how = goesOn(code[i]!, stack);
    if (how === undefined || HEREDOC_OPENER.test(code[i]!)) return undefined;
    const parts = [code[i]!];
    let size = code[i]!.length;
    for (let j = i + 1; j < raw.length; j++) {
      if (
        j - i > MAX_JOINED_LINES ||
        (size += code[j]!.length + 1) > MAX_JOINED_CHARS ||
        ending(raw[j]!) !== undefined ||
        HEREDOC_OPENER.test(code[j]!)
      ) {
        noJoinUntil = j;
        return undefined;
      }
      // The last part is always one line, so cutting its backslash costs that line.
      if (how === 'backslash') parts[parts.length - 1] = parts.at(-1)!.slice(0, -1);
      else parts.push('\n');
      parts.push(code[j]!);
      how = goesOn(code[j]!, stack);
      if (how === undefined) return { text: parts.join(''), last: j };
    }
    noJoinUntil = raw.length;
    return undefined;
  };

  for (const [i, rawLine] of raw.entries()) {
    if (i <= joinedUntil) continue;
    const frame = active.at(-1);
    const depth = frame ? ending(rawLine) : undefined;
    if (depth !== undefined) {
      out.push({ text: '' });
      close(depth);
      continue;
    }
    const reader = frame?.reader;
    if (reader?.kind === 'program') {
      out.push({
        text: frame!.quoted ? code[i]! : vars.text(code[i]!),
        program: { language: reader.language, unit: frame!.unit },
        ...(frame!.quoted ? {} : { expandedCode: true as const }),
      });
    } else {
      const group = i > noJoinUntil ? joined(i) : undefined;
      // Read as the shell reads it: `$'…'` decoded, aliases expanded where commands are named, then variables.
      const text = aliases.expand(plainQuotes(group?.text ?? code[i]!));
      const line: HookLine = {
        text: vars.line(text),
        ...(reader?.kind === 'shell' && !frame!.quoted ? { expandedCode: true as const } : {}),
        ...(reader?.kind === 'data' ? { data: true as const } : {}),
      };
      aliases.record(line.text);
      const evaluated = /\beval\b/.test(text) ? vars.evaluated(text) : line.text;
      if (evaluated !== line.text) line.evaluated = evaluated;
      out.push(line);
      open(line, frame ?? top);
      if (group) {
        line.span = group.last - i;
        for (let j = i + 1; j <= group.last; j++) out.push({ text: '' });
        joinedUntil = group.last;
      }
    }
    if (frame && !frame.downloads && DOWNLOADS.test(out[i]!.text)) frame.downloads = true;
    // A body assigned to a name: what it would do as each language's program, once that name is run.
    if (frame?.marks) {
      for (const [language, marks] of Object.entries(PROGRAM_MARKS) as [
        ProgramLanguage,
        (typeof PROGRAM_MARKS)[ProgramLanguage],
      ][]) {
        if (marks.downloads.test(code[i]!)) frame.marks.downloads.add(language);
        if (marks.evaluates.test(code[i]!)) frame.marks.evaluates.add(language);
      }
    }
  }
  // Bodies the hook ends inside of end with it (and the next one a line opened, if any, is empty).
  while (active.length > 0) close(0);
  return out;
}
