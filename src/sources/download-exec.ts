import { posix } from 'node:path';

import { decompression, extraction } from './internal/archive-words.ts';
import { downloadOutputs } from './internal/download-words.ts';
import { createFolderSet, resolvePath } from './internal/hook-paths.ts';
import { createPipeFlow, type PipeFlow } from './internal/pipe-flow.ts';
import { programActions } from './internal/program-calls.ts';
import { filesRun, inlineCode, stdinReader, withoutRedirections } from './internal/run-words.ts';
import {
  asValue,
  byWord,
  commandWords,
  MAX_NESTING,
  parseCommands,
  samePath,
  type ShellCommand,
  type Substitution,
} from './internal/shell-words.ts';
import { PROGRAM_MARKS } from './program-rules.ts';
import type { HookLine, ProgramLanguage } from './read-hook.ts';

/** Commands that copy their first arguments to their last (into it, when it is a folder). */
const COPIES = /^(?:cp|mv|install|ln)$/;
/** The longest folder `cd` is followed into: longer than real folders, short enough to join to every path. */
const MAX_FOLDER = 256;
/** Redirections that send a command's standard output to a file. */
const STDOUT_TO = /^(?:1?>>?|&>>?)$/;
/** A function definition's first line: `name() {`, `function name {`, `name ()` with `{` on the next line. */
const FUNCTION_HEADER =
  /^\s*(?:function\s+([A-Za-z_][\w:.-]*)(?:\s*\(\s*\))?|([A-Za-z_][\w:.-]*)\s*\(\s*\))\s*(?:\{|$)/;
/** A positional parameter in a function's body: `$1`, `${2}`, `$@`, `$*`, `$#`. */
const POSITIONAL = /\$(?:\{(\d+|[@*#])\}|(\d|[@*#]))/g;
/**
 * What a hook's function calls may replay and its `eval`s and `sh -c`s re-read, in characters, all
 * together, at least; a larger hook may re-read its own size (so an `eval` chain costs two readings, not one per level).
 */
const MIN_REREAD_BUDGET = 64 * 1024;
/** What replaying one command of a function's body costs of that budget besides its text. */
const REPLAY_COST = 64;

/** A hook line that runs a file an earlier step of the same hook downloaded. */
export interface DownloadRun {
  /** 0-based index into the hook's lines. */
  line: number;
  file: string;
  /** The downloaded archive the file may come from, when it is not itself a download. */
  archive?: string;
  /** What the line does with a download when it is no file it runs (`evaluates a download`…); `file` is then empty. */
  how?: string;
  /** Not a download run but a command whose name the scan cannot know (`how` says which): for review, not a verdict. */
  review?: true;
}

/** A substitution that prints where a command is (`command -v node`): as a command name it is that command. */
const WHERE_IS = /^\s*(?:command\s+-v|which|type\s+-[pP])\s+([\w.+-]+)\s*$/;

/**
 * The command word `word` (its substitutions `subs`) when its name — the part after its last `/` —
 * is computed at run time: a variable the scan could not read (`$step`, `${!h}`, set by `read` or
 * `$(…)` or the environment), or a substitution's output. Positional parameters (`"$@"`, `$1`) are
 * a function's arguments, read at its calls.
 */
function computedName(word: string, subs: readonly Substitution[] | undefined): string | undefined {
  let named = '';
  let from = 0;
  for (const s of subs ?? []) {
    named += word.slice(from, s.start) + (WHERE_IS.exec(s.code)?.[1] ?? '\0');
    from = s.end;
  }
  named += word.slice(from);
  const name = named.slice(named.lastIndexOf('/') + 1);
  return name.includes('\0') || /\$[A-Za-z_{]/.test(name) ? word : undefined;
}

/** Options of `read` and of `mapfile`/`readarray` that take the next word as their value. */
const READ_VALUED = /^-[adinNptu]$/;
const MAPFILE_VALUED = /^-[dnOsuCc]$/;

/**
 * The names a builtin sets from a download (`words` the command's own, `plain` without
 * redirections): `printf -v NAME` with an argument that `carries` one (by its index in `words`),
 * and `read`/`mapfile`/`readarray` whose standard input is a downloaded file (a `<(curl …)` is one).
 */
function downloadSetNames(
  words: readonly string[],
  plain: readonly string[],
  carries: (j: number) => boolean,
  isDownloaded: (path: string) => boolean,
): string[] {
  const name = words[0];
  if (name === 'printf') {
    const v = words.indexOf('-v');
    const target = v > 0 ? words[v + 1] : undefined;
    return target !== undefined && /^[A-Za-z_]\w*$/.test(target) && words.some((_, j) => j > v + 1 && carries(j))
      ? [target]
      : [];
  }
  if (name !== 'read' && name !== 'mapfile' && name !== 'readarray') return [];
  if (!words.some((w, j) => /^0?<$/.test(w) && words[j + 1] !== undefined && isDownloaded(words[j + 1]!))) return [];
  const valued = name === 'read' ? READ_VALUED : MAPFILE_VALUED;
  const names: string[] = [];
  for (let j = 1; j < plain.length; j++) {
    const w = plain[j]!;
    if (w === '-a' && name === 'read' && plain[j + 1] !== undefined) names.push(plain[++j]!);
    else if (valued.test(w)) j++;
    else if (/^[A-Za-z_]\w*$/.test(w)) names.push(w);
  }
  if (names.length === 0) names.push(name === 'read' ? 'REPLY' : 'MAPFILE');
  return name === 'read' ? names : names.slice(-1);
}

/** Whether `word` refers to one of `names` (`$s`, `${s}`, `"$s/x"`). */
function refersTo(word: string, names: ReadonlySet<string>): boolean {
  if (names.size === 0 || !word.includes('$')) return false;
  for (const m of word.matchAll(/\$\{?([A-Za-z_]\w*)/g)) if (names.has(m[1]!)) return true;
  return false;
}

/** A function body's command with its positional parameters bound to a call's arguments (`$@`, `$*` joined into one word). */
function bindArguments(command: ShellCommand, args: readonly string[]): ShellCommand {
  const bind = (text: string): string =>
    text.includes('$')
      ? text.replace(POSITIONAL, (whole, braced: string | undefined, bare: string | undefined) => {
          const p = braced ?? bare!;
          if (p === '@' || p === '*') return args.join(' ');
          if (p === '#') return String(args.length);
          return p === '0' ? whole : (args[Number(p) - 1] ?? '');
        })
      : text;
  const subs = byWord(command.substitutions);
  const substitutions: Substitution[] = [];
  const words = command.words.map((word, j) => {
    let out = '';
    let from = 0;
    for (const s of subs.get(j) ?? []) {
      out += bind(word.slice(from, s.start));
      const text = bind(word.slice(s.start, s.end));
      substitutions.push({ ...s, code: bind(s.code), start: out.length, end: out.length + text.length });
      out += text;
      from = s.end;
    }
    return out + bind(word.slice(from));
  });
  return { ...command, words, substitutions };
}

/**
 * Download-and-execute spread over steps: a file downloaded (`curl -o`, `wget -O`, `curl > f`…),
 * copied or moved from one, decompressed from one, or fed a download through a pipe (`| tee f`,
 * `| gunzip > f`), and then, later on the same line or any later line of the hook, run as a
 * command, handed to a shell or interpreter, sourced, or made executable (`chmod +x`, `chmod 755`);
 * also any file in a folder a downloaded archive was unpacked into (`tar x`, `unzip`, `7z x`,
 * `python -m zipfile -e`, `curl … | tar xz`) run by its path. Paths are compared as seen from the
 * folder the hook has `cd`-ed to (as written, from the root, after a `cd` the scan cannot follow).
 * `sh -c '…'` is read as the line it holds; a file written from a here-document whose body
 * downloads holds a download. Lines are the hook's own as `readHook` reads them.
 */
export function downloadedThenRun(lines: readonly HookLine[]): DownloadRun[] {
  return drain(readDownloadRuns(lines, parseCommands));
}

/** Runs a line-by-line reading (see {@link readDownloadRuns}) to its end. */
export function drain<T>(reading: Generator<void, T, void>): T {
  for (;;) {
    const step = reading.next();
    if (step.done) return step.value;
  }
}

/**
 * {@link downloadedThenRun} one hook line per step: the first `next()` reads no line, each one
 * after it reads one, and the one that reads the last line answers the runs found. `parse` splits
 * a text into commands (a cache shared with another reading of the same line saves the work).
 */
export function* readDownloadRuns(
  lines: readonly HookLine[],
  parse: (text: string) => ShellCommand[],
): Generator<void, DownloadRun[], void> {
  // Looked up by name (and folder by component), so each command costs its own words, not the files downloaded so far.
  const downloaded = new Set<string>();
  const unpacked = createFolderSet();
  const found: DownloadRun[] = [];
  // Variables assigned a download (`s=$(curl …)`), and the functions defined so far (their bodies' commands).
  const tainted = new Set<string>();
  const functions = new Map<string, ShellCommand[]>();
  // Names assigned a here-document's body, with the languages in which it downloads and evaluates code.
  const captured = new Map<string, ProgramLanguage[]>();
  /** The captured program `word` refers to in `language`, if any (`"$code"` of `python3 -c "$code"`). */
  const capturedIn = (word: string, language: string): string | undefined => {
    if (captured.size === 0 || !word.includes('$')) return undefined;
    for (const m of word.matchAll(/\$\{?([A-Za-z_]\w*)/g))
      if (captured.get(m[1]!)?.includes(language as ProgramLanguage)) return m[1]!;
    return undefined;
  };
  // The words the last command printed (`echo "$code"`), for the command its pipe feeds.
  let fedCode: string[] = [];
  let rereadLeft = Math.max(
    MIN_REREAD_BUDGET,
    lines.reduce((n, l) => n + l.text.length + 1, 0),
  );
  /** Whether `text` may still be re-read (its length is then spent). */
  const reread = (text: string): boolean => (rereadLeft -= text.length) >= 0;
  // The folder `cd` went to; undefined once the scan cannot tell (`cd "$(dirname "$0")"`, a cd
  // deeper than any real folder), and paths are then read as written, from the root hooks start in.
  let cwd: string | undefined = '.';
  let previous: string | undefined = cwd;
  // The folders `pushd` left, last first (a list shared, not copied, by the subshells that save it).
  let folders: Folders = undefined;
  const at = (path: string): string => resolvePath(cwd ?? '.', path);
  const isDownloaded = (path: string): boolean => downloaded.has(at(path));
  const markDownloaded = (path: string): void => {
    downloaded.add(at(path));
  };
  const unpackedInto = (folder: string, archive: string): void => unpacked.add(at(folder), archive);
  const cd = (to: string | undefined): void => {
    // A relative cd from a folder the scan lost stays lost.
    const lost = to !== undefined && (/\$\(|`/.test(to) || (cwd === undefined && !/^[/~$]/.test(to)));
    const next = to === undefined ? '~' : to === '-' ? previous : lost ? undefined : resolvePath(cwd ?? '.', to);
    previous = cwd;
    // Each relative path is joined to the folder, so a folder grown by cd after cd would make every later path cost its length.
    cwd = next !== undefined && next.length <= MAX_FOLDER ? next : undefined;
  };
  /** Runs `read` as a subshell (a substitution, a function's definition read in place): a `cd` in it does not last. */
  function apart<T>(read: () => T): T {
    const saved = { cwd, previous, folders };
    try {
      return read();
    } finally {
      ({ cwd, previous, folders } = saved);
    }
  }
  /** A line that does something with a download other than run a file of it (once per line and kind). */
  const flag = (i: number, onLine: Set<string>, how: string): void => {
    if (onLine.has(how)) return;
    onLine.add(how);
    found.push({ line: i, file: '', how });
  };

  /**
   * One command; `fed` says a download comes in on its standard input, `depth` how deep in
   * substitutions, `eval`s, `sh -c` codes and function calls it is. Answers whether its standard output carries one.
   */
  function command(cmd: ShellCommand, fed: boolean, i: number, onLine: Set<string>, depth: number): boolean {
    const all = cmd.words;
    // Its substitutions run first, each in a subshell: the words they put a download in, the `<(…)` files that hold one.
    const carrying = new Set<number>();
    for (const s of depth < MAX_NESTING ? cmd.substitutions : []) {
      if (!apart(() => shellLine(s.code, i, onLine, undefined, depth + 1))) continue;
      if (s.kind === '<(') markDownloaded(all[s.word]!);
      else if (s.kind !== '>(') carrying.add(s.word);
    }
    const carries = (j: number): boolean => carrying.has(j) || refersTo(all[j] ?? '', tainted);
    // `s=$(curl …)`, `export s="$(curl …)"`: the name holds a download until it is assigned something else.
    const keyword = /^(?:export|local|readonly|declare|typeset)$/.test(all[0] ?? '') ? 1 : 0;
    for (let j = keyword; j < all.length; j++) {
      const m = /^([A-Za-z_]\w*)\+?=/.exec(all[j]!);
      if (m) captured.delete(m[1]!);
      if (m && carries(j)) tainted.add(m[1]!);
      else if (m && !all[j]!.includes('+=')) tainted.delete(m[1]!);
      else if (!m && !keyword) break;
    }
    const words = commandWords(all);
    const offset = all.length - words.length;
    const plain = withoutRedirections(words);
    const name = posix.basename(words[0] ?? '');
    // Names a builtin sets from a download: `printf -v s … "$(curl …)"`, `read s < <(curl …)`,
    // `mapfile -t a < f` of a downloaded f.
    for (const set of downloadSetNames(words, plain, (j) => carries(offset + j), isDownloaded)) tainted.add(set);
    // A download as the command itself (`$(curl …)`, `"$s"`): its words run.
    if (words.length > 0 && carries(offset)) flag(i, onLine, 'runs a download as a command');
    else if (words.length > 0 && !onLine.has('review')) {
      const computed = computedName(words[0]!, byWord(cmd.substitutions).get(offset));
      if (computed !== undefined) {
        onLine.add('review');
        found.push({
          line: i,
          file: '',
          how: `runs a command named at run time (${computed.slice(0, 60)})`,
          review: true,
        });
      }
    }
    for (const { path, named } of filesRun(words)) {
      const key = samePath(path);
      if (onLine.has(key)) continue;
      const archive = named ? undefined : unpacked.holding(at(path));
      if (isDownloaded(path) || archive !== undefined) {
        onLine.add(key);
        found.push({ line: i, file: key, ...(archive !== undefined && !isDownloaded(path) ? { archive } : {}) });
      }
    }
    const inline = inlineCode(words);
    const runsCaptured = inline === undefined ? undefined : capturedIn(words[inline.at]!, inline.language);
    if (runsCaptured !== undefined)
      flag(
        i,
        onLine,
        `hands ${name} the code of a here-document in $${runsCaptured}, which downloads and evaluates code`,
      );
    if (inline && carries(offset + inline.at)) flag(i, onLine, `hands a download to ${name} as its code`);
    else if (inline && depth < MAX_NESTING) {
      // The code as the interpreter gets it: what the outer shell substituted into it has run already.
      const code = asValue(inline.code, byWord(cmd.substitutions).get(offset + inline.at));
      if (reread(code) && inline.language === 'shell') shellLine(code, i, onLine, undefined, depth + 1);
      else if (rereadLeft >= 0 && inline.language !== 'shell')
        programLine(code, inline.language, newUnit(), i, onLine, depth + 1);
    }
    if (name === 'eval' && words.length > 1) {
      if (words.some((_, j) => j > 0 && carries(offset + j))) flag(i, onLine, 'evaluates a download');
      else if (depth < MAX_NESTING) {
        const subs = byWord(cmd.substitutions);
        const code = words
          .slice(1)
          .map((w, j) => asValue(w, subs.get(offset + 1 + j)))
          .join(' ');
        if (reread(code)) shellLine(code, i, onLine, undefined, depth + 1);
      }
    }
    // A program read from standard input (`sh`, `python3 -`, `source /dev/stdin`) fed a download: by a pipe, a here-string, or `<` from a downloaded file.
    const stdin = stdinReader(plain);
    const pipedIn = fedCode;
    fedCode = [];
    if (stdin !== undefined && stdin !== 'shell') {
      const code = [...pipedIn, ...words.filter((w, j) => words[j - 1] === '<<<')]
        .map((w) => capturedIn(w, stdin))
        .find((n) => n !== undefined);
      if (code !== undefined)
        flag(i, onLine, `feeds ${name} the code of a here-document in $${code}, which downloads and evaluates code`);
    }
    if (name === 'echo' || name === 'printf') fedCode = words.slice(1).filter((w) => w.includes('$'));
    if (stdin !== undefined) {
      const hereString = words.some((w, j) => w === '<<<' && carries(offset + j + 1));
      const fromFile = words.some(
        (w, j) => /^0?<$/.test(w) && words[j + 1] !== undefined && isDownloaded(words[j + 1]!),
      );
      if (fed || hereString || fromFile) flag(i, onLine, `feeds a download to ${name}`);
    }
    const body = functions.get(words[0] ?? '');
    const called = body !== undefined && depth < MAX_NESTING && call(body, plain.slice(1), fed, i, onLine, depth + 1);
    const args = words.slice(1).filter((w) => !w.startsWith('-'));
    const unpack = extraction(words);
    if (unpack && (unpack.archive === undefined ? fed : isDownloaded(unpack.archive)))
      unpackedInto(unpack.into, unpack.archive ?? 'a download piped into it');
    const decompressed = decompression(words);
    if (decompressed?.from !== undefined && decompressed.to !== undefined && isDownloaded(decompressed.from))
      markDownloaded(decompressed.to);
    if (COPIES.test(name) && args.length >= 2 && args.slice(0, -1).some(isDownloaded)) {
      const into = args.at(-1)!;
      markDownloaded(into);
      for (const from of args.slice(0, -1)) markDownloaded(posix.join(into, posix.basename(from)));
    }
    const download = downloadOutputs(words);
    for (const target of download?.files ?? []) markDownloaded(target);
    // What this command writes to its standard output comes from a download: the pipe or redirect it feeds gets one.
    const echoes = (name === 'echo' || name === 'printf') && words.some((_, j) => j > 0 && carries(offset + j));
    const carriesOut =
      fed ||
      called ||
      echoes ||
      download?.stdout === true ||
      (decompressed !== undefined &&
        decompressed.to === undefined &&
        (decompressed.from === undefined ? fed : isDownloaded(decompressed.from))) ||
      (name === 'cat' && args.some(isDownloaded));
    if (carriesOut) {
      all.forEach((w, j) => {
        if (STDOUT_TO.test(w) && all[j + 1] !== undefined) markDownloaded(all[j + 1]!);
      });
      if (name === 'tee') for (const target of args) markDownloaded(target);
    }
    if (name === 'cd' || name === 'pushd') {
      if (name === 'pushd') folders = { folder: cwd, rest: folders };
      cd(args[0]);
    } else if (name === 'popd') {
      previous = cwd;
      cwd = folders ? folders.folder : '.';
      folders = folders?.rest;
    }
    return carriesOut;
  }

  /**
   * A call of a function defined earlier: its body's commands read at the calling line with the
   * call's arguments as `$1`…; answers whether its output carries a download. Calls inside calls
   * go `MAX_NESTING` deep, and replay from the hook's re-reading budget (`MIN_REREAD_BUDGET`).
   */
  function call(
    body: readonly ShellCommand[],
    args: readonly string[],
    fed: boolean,
    i: number,
    onLine: Set<string>,
    depth: number,
  ): boolean {
    let carried = fed;
    let out = false;
    for (const [k, c] of body.entries()) {
      // A command costs its text and a fixed part for reading it (a replay of short commands costs more than their text).
      rereadLeft -=
        REPLAY_COST +
        c.words.reduce((n, w) => n + w.length + 1, 0) +
        c.substitutions.reduce((n, s) => n + s.code.length, 0);
      if (rereadLeft < 0) break;
      carried = command(bindArguments(c, args), k === 0 ? fed : c.after === '|' && carried, i, onLine, depth);
      if (body[k + 1]?.after !== '|') out ||= carried;
    }
    return out;
  }

  /** One line of shell (or the code of a `sh -c`, `eval` or substitution on it); `onLine` keeps one finding per file and line. Answers whether its output carries a download. */
  function shellLine(
    line: string,
    i: number,
    onLine: Set<string>,
    writes?: ReadonlyMap<number, string[]>,
    depth = 0,
    hookFlow?: PipeFlow,
  ): boolean {
    const commands = parse(line);
    if (commands.length === 0) return false;
    const flow = hookFlow ?? createPipeFlow();
    const before = flow.out;
    for (const [k, c] of commands.entries()) {
      // A here-document whose body downloads, written to a file: the file holds a download.
      for (const file of writes?.get(k) ?? []) markDownloaded(file);
      if (c.after !== '|') fedCode = [];
      // Whether the command's standard input is a download: a pipe from a command or a compound (`{ curl u; } | sh`) that carries one.
      const out = command(c, flow.enter(c) !== 0, i, onLine, depth);
      flow.leave(c, out ? 1 : 0, commands[k + 1]);
    }
    return flow.out !== before;
  }

  /** One line of another language's program (`unit`: what that program did on its earlier lines). */
  function programLine(
    text: string,
    language: ProgramLanguage,
    unit: Unit,
    i: number,
    onLine: Set<string>,
    depth = 0,
  ): void {
    // A program that downloads: what it writes may be the download (the order of its calls is not followed).
    if (!unit.downloads && PROGRAM_MARKS[language].downloads.test(text)) {
      unit.downloads = true;
      for (const file of unit.written.splice(0)) markDownloaded(file);
    }
    for (const action of programActions(text, language, unit.consts)) {
      if (action.kind === 'shell') {
        if (depth < MAX_NESTING) shellLine(action.line, i, onLine, undefined, depth + 1);
      } else if (action.kind === 'command')
        command({ words: action.words, after: '', heredocs: [], substitutions: [] }, false, i, onLine, depth);
      else if (action.kind === 'download') markDownloaded(action.file);
      else if (action.kind === 'write') {
        if (unit.downloads) markDownloaded(action.file);
        else unit.written.push(action.file);
      } else if (action.kind === 'archive') unit.archive = action.file;
      else if (action.kind === 'assign') unit.consts.set(action.name, action.value);
      else {
        // `extractall()` unpacks the archive opened before it; node's tar without a file, the stream piped into it.
        const archive = action.archive === '' ? unit.archive : action.archive;
        if (archive === undefined ? unit.downloads : isDownloaded(archive))
          unpackedInto(action.into, archive ?? 'a download piped into it');
      }
    }
  }

  // The function being defined: its body's commands so far, and how deep in `{ }` they are.
  let defining:
    | {
        name: string;
        body: ShellCommand[];
        braces: number;
        saved: { cwd: string | undefined; previous: string | undefined; folders: Folders };
      }
    | undefined;
  /** Collects a line of a function's definition; answers whether the definition ended on it. */
  function define(text: string, header: boolean): boolean {
    const d = defining!;
    for (const c of parse(text)) {
      let words = c.words;
      if (d.braces === 0) {
        // The header (`name()`, `function name`), then the `{` the body starts with.
        const open = words.indexOf('{');
        if (open < 0) continue;
        words = words.slice(open + 1);
        d.braces = 1;
        if (words.length === 0) continue;
        d.body.push({
          ...c,
          words,
          substitutions: c.substitutions.filter((s) => s.word > open).map((s) => ({ ...s, word: s.word - open - 1 })),
        });
        continue;
      }
      if (words[0] === '{') d.braces++;
      if (words[0] === '}' && --d.braces === 0) return true;
      d.body.push(c);
    }
    // A header not followed by `{` (a body in parentheses, say) is not read as a function.
    if (d.braces === 0 && !header) defining = undefined;
    return false;
  }

  let unit = { id: 0, state: newUnit() };
  const hookFlow = createPipeFlow();
  for (const [i, line] of lines.entries()) {
    yield;
    // Program text split as shell reads `tarfile.open('a.tgz')` as a command `a.tgz`: its shell is what it hands a shell.
    if (line.program) {
      if (line.program.unit !== unit.id) unit = { id: line.program.unit, state: newUnit() };
      programLine(line.text, line.program.language, unit.state, i, new Set());
      continue;
    }
    // A function's body is read where it is defined (as before calls were followed), with a cd in it kept there, and again at each call.
    const header = defining === undefined ? FUNCTION_HEADER.exec(line.text) : null;
    if (header) defining = { name: header[1] ?? header[2]!, body: [], braces: 0, saved: { cwd, previous, folders } };
    const text = line.evaluated ?? line.text;
    // The hook's own lines share one flow: a compound spread over lines (`{` … `curl u` … `} | sh`) is followed.
    shellLine(text, i, new Set(), line.evaluated === undefined ? line.writesDownloads : undefined, 0, hookFlow);
    for (const [name, languages] of line.captures ?? []) captured.set(name, languages);
    if (defining && define(line.text, header !== null)) {
      functions.set(defining.name, defining.body);
      ({ cwd, previous, folders } = defining.saved);
      defining = undefined;
    }
  }
  return found;
}

/** The folders `pushd` left, last first. */
type Folders = { folder: string | undefined; rest: Folders } | undefined;

/** What one program did so far that its later lines depend on. */
interface Unit {
  downloads: boolean;
  /** Files it wrote before it was seen to download. */
  written: string[];
  /** The archive it opened last (`tarfile.open`, `new AdmZip`). */
  archive: string | undefined;
  /** Names it assigned a literal string. */
  consts: Map<string, string>;
}

function newUnit(): Unit {
  return { downloads: false, written: [], archive: undefined, consts: new Map() };
}
