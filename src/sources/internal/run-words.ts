/** What a command (its own words, see `commandWords`) runs: files, and program text given inline. */
import { posix } from 'node:path';

/** Programs that run (or load) the file named as their argument. */
const INTERPRETERS = /^(?:[a-z]*sh|source|\.|python[\d.]*|node(?:js)?|deno|bun|perl|ruby|php)$/;
/** Interpreter options after which the program is given inline or by module name, not as a file. */
const INLINE = new Set(['-c', '-e', '-E', '-p', '-m', '--eval', '--print', '-']);
/** Interpreter options whose value is a file loaded before the program (node and ruby `-r`, bash `--rcfile`). */
const LOADS = new Set(['-r', '--require', '--import', '--loader', '--rcfile', '--init-file']);
/** Interpreter options that take the next word as their value. */
const VALUED = new Set(['-o', '-O', '-W', '-X', '-I', '--input-type', '--conditions', '-C']);

/** A symbolic chmod mode that grants execute (`+x`, `u+rx`, `a=rwx`); octal modes are read digit by digit. */
const EXECUTE_MODE = /^[ugoa]*[+=][rwxXst]*[xX]/;

function grantsExecute(mode: string): boolean {
  if (/^[0-7]+$/.test(mode)) return [...mode.slice(-3)].some((d) => Number(d) % 2 === 1);
  return EXECUTE_MODE.test(mode);
}

/** A file a command runs; `named` is a command run by a bare name (looked up on PATH, not in a folder). */
export interface FileRun {
  path: string;
  named: boolean;
}

/** The files an interpreter's arguments run: its script (the first other argument), and files it loads first. */
function interpreterFiles(args: readonly string[]): string[] {
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    // Code given inline (`-c`, `-e`) or a module by name (`-m`): no script file.
    if (INLINE.has(a)) return files;
    if (LOADS.has(a)) files.push(args[++i] ?? '');
    else if (VALUED.has(a)) i++;
    else if (!a.startsWith('-')) return [...files, a];
  }
  return files;
}

/**
 * The files a command runs, sources or marks executable: the command itself, the script an
 * interpreter or shell is handed (not the script's own arguments), the files of a `chmod` that
 * grants execute.
 */
export function filesRun(words: readonly string[]): FileRun[] {
  const [name = '', ...args] = words;
  const base = posix.basename(name);
  const own = { path: name, named: !name.includes('/') };
  if (INTERPRETERS.test(base)) return [own, ...interpreterFiles(args).map((path) => ({ path, named: false }))];
  if (name === 'chmod' && args.some((a) => !a.startsWith('-') && grantsExecute(a)))
    return [
      own,
      ...args.filter((a) => !a.startsWith('-') && !grantsExecute(a)).map((path) => ({ path, named: false })),
    ];
  return [own];
}

/** `find`'s actions that run a command on each file found (`-exec cmd {} ;`, `-execdir cmd {} +`). */
const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir']);
/** How many of `find`'s folders are read. */
const MAX_FIND_FOLDERS = 16;
/** `find`'s options before its folders (`-L`, `-D debug`, `-O3`). */
const FIND_OPTIONS = /^-(?:[HLP]|D|O\d*)$/;

/** A command `find` runs on the files it finds: its words' range in find's arguments, and the found file as the scan reads it. */
export interface FindAction {
  /** Index of the command's first word in find's arguments (after `-exec`), and one past its last (before `;` or `+`). */
  start: number;
  end: number;
  /** Each folder searched (at most MAX_FIND_FOLDERS) joined with the file a literal `-name` names, else `{}` (any file there). */
  found: string[];
}

/**
 * The commands of `find`'s `-exec`, `-execdir`, `-ok` and `-okdir` actions (`args` are find's own
 * arguments). `{}` stands for each file found: read as the file a literal `-name` names under each
 * folder searched, or as any file there (`folder/{}`), so a command run on the files of a
 * downloaded archive's folder is seen.
 */
export function findActions(args: readonly string[]): FindAction[] {
  let i = 0;
  while (i < args.length && FIND_OPTIONS.test(args[i]!)) i += args[i] === '-D' ? 2 : 1;
  const folders: string[] = [];
  // At most MAX_FIND_FOLDERS are read: each action's command is read once per folder (foundRuns in shell-words.ts), and a line of many would make that quadratic.
  for (; i < args.length && !/^[-(!]/.test(args[i]!); i++)
    if (folders.length < MAX_FIND_FOLDERS) folders.push(args[i]!);
  if (folders.length === 0) folders.push('.');
  const named = args.findIndex((a) => a === '-name' || a === '-iname');
  const literal = named < 0 ? undefined : args[named + 1];
  const name = literal !== undefined && literal !== '' && !/[*?[\\/]/.test(literal) ? literal : '{}';
  const found = folders.map((folder) => posix.join(folder, name));
  const actions: FindAction[] = [];
  for (let k = i; k < args.length; k++) {
    if (!FIND_ACTIONS.has(args[k]!)) continue;
    let end = k + 1;
    while (end < args.length && args[end] !== ';' && !(args[end] === '+' && args[end - 1] === '{}')) end++;
    actions.push({ start: k + 1, end, found });
    k = end;
  }
  return actions;
}

/** The languages of the programs a hook runs; `shell` is the hook's own. */
export type Language = 'shell' | 'python' | 'node' | 'perl' | 'ruby' | 'php';

/** The language an interpreter runs, by its name (`bash`, `python3.12`, `node`…). */
export function languageOf(command: string): Language | undefined {
  const base = posix.basename(command);
  if (/^[a-z]*sh$/.test(base)) return 'shell';
  if (/^python[\d.]*$/.test(base)) return 'python';
  if (/^(?:node(?:js)?|deno|bun)$/.test(base)) return 'node';
  return base === 'perl' || base === 'ruby' || base === 'php' ? base : undefined;
}

/** The language of the program a command reads from its standard input (`bash`, `sh -s`, `python3 -`, `node`), if it does. */
export function stdinProgram(words: readonly string[]): Language | undefined {
  const language = languageOf(words[0] ?? '');
  const args = words.slice(1);
  if (language === undefined || inlineCode(words) !== undefined || args.includes('-m')) return undefined;
  // `sh -s a b`: the script from standard input, `a b` its arguments.
  if (language === 'shell' && args.some((a) => /^-[a-z]*s[a-z]*$/.test(a))) return language;
  return interpreterFiles(args).length > 0 ? undefined : language;
}

/** Names of a program's standard input given as its script. */
const STDIN_FILES = new Set(['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

/**
 * The language of the program a command reads from its standard input, as `stdinProgram`, or as
 * the script it is handed by the name of its standard input (`source /dev/stdin`, `bash /dev/stdin`).
 * `words` are the command's own, without redirections.
 */
export function stdinReader(words: readonly string[]): Language | undefined {
  const language = stdinProgram(words);
  if (language !== undefined) return language;
  const base = posix.basename(words[0] ?? '');
  const script = filesRun(words)[1];
  if (script === undefined || !STDIN_FILES.has(script.path)) return undefined;
  return base === 'source' || base === '.' ? 'shell' : languageOf(base);
}

/** A program given inline: `sh -c 'code'`, `python -c`, `node -e`/`-p`, `perl -e`, `ruby -e`. */
export interface InlineCode {
  language: Exclude<Language, 'php'>;
  code: string;
  /** The index of the code's word in the command's words. */
  at: number;
}

/** The program a command is given inline, if it is. */
export function inlineCode(words: readonly string[]): InlineCode | undefined {
  const language = languageOf(words[0] ?? '');
  if (language === undefined || language === 'php') return undefined;
  const flag = words.findIndex(
    (w, i) =>
      i > 0 &&
      (language === 'shell'
        ? /^-[a-z]*c$/.test(w)
        : language === 'python'
          ? w === '-c'
          : /^(?:-[eEp]|--eval|--print)$/.test(w)),
  );
  const code = flag < 0 ? undefined : words[flag + 1];
  return code === undefined ? undefined : { language, code, at: flag + 1 };
}

/** Redirection words the tokenizer gives (each followed by its file or string). */
export const REDIRECTION = /^(?:\d?[<>]>?|&>>?|<<<)$/;

/** A command's words without its redirections and their files (what `sh < f` runs is `sh`). */
export function withoutRedirections(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let j = 0; j < words.length; j++) {
    if (REDIRECTION.test(words[j]!)) j++;
    else out.push(words[j]!);
  }
  return out;
}
