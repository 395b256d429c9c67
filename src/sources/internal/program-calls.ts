/**
 * What a line of python, node, perl, ruby or php code does that the download-then-run reading
 * follows, from the calls it makes with literal arguments (or names assigned a literal earlier in
 * the same program): shell commands it hands to a shell (`os.system('…')`, `execSync('…')`),
 * programs it runs by argument list (`subprocess.run(['sh', 'x'])`, `spawn('./x')`), files it
 * loads as code (`require('./x')`, `runpy.run_path('x')`), makes executable, writes, downloads
 * to (`urlretrieve(u, 'x')`), and archives it unpacks (`tarfile.open('a').extractall('d')`,
 * node's `tar.x({ file, cwd })`). No dataflow beyond that: a path built at run time is not followed.
 *
 * Every pattern starts at a fixed call name and reads bounded text that stops at a quote or
 * bracket, so a line of them costs its length.
 */
import type { Language } from './run-words.ts';

/** One thing a program line does, at its offset in the line (so a line's actions run in order). */
export type ProgramAction = { at: number } & (
  | { kind: 'shell'; line: string }
  | { kind: 'command'; words: string[] }
  | { kind: 'write'; file: string }
  | { kind: 'download'; file: string }
  | { kind: 'archive'; file: string }
  | { kind: 'unpack'; archive: string | undefined; into: string }
  | { kind: 'assign'; name: string; value: string }
);

/** A literal string (groups 1-3) or a name (group 4). */
const ARG = String.raw`(?:'([^'\n]{0,4096})'|"([^"\n]{0,4096})"|\`([^\`\n]{0,4096})\`|([A-Za-z_$][\w$]{0,64}))`;
/** A literal string only (groups 1-3). */
const LIT = String.raw`(?:'([^'\n]{0,4096})'|"([^"\n]{0,4096})"|\`([^\`\n]{0,4096})\`)`;
const LIST = String.raw`\[([^[\]\n]{0,4096})\]`;
const ITEMS = /'([^'\n]*)'|"([^"\n]*)"/g;

/** What a match does; `arg(k)` is the k-th `ARG` of the pattern (its groups come first), a name resolved; `m` the match. */
type Make = (
  arg: (k: number) => string | undefined,
  m: RegExpExecArray,
  consts: ReadonlyMap<string, string>,
) => ProgramDoing[];
type ProgramDoing = ProgramAction extends infer A ? (A extends unknown ? Omit<A, 'at'> : never) : never;

/** Pattern sources (with `ARG`/`LIT`/`LIST` in them) and what a match does. */
type Calls = readonly (readonly [source: string, make: Make])[];

/** The strings of a list literal (`['sh', 'x']`), names in it resolved. */
function items(list: string | undefined, consts: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const m of (list ?? '').matchAll(ITEMS)) out.push(m[1] ?? m[2]!);
  return out.length > 0 ? out : (list ?? '').split(',').map((w) => consts.get(w.trim()) ?? w.trim());
}

const EXECUTE_OCTAL = /^(?:0o|0)?[0-7]*[1357]$/;

/** A chmod mode argument granting execute: an octal literal with an execute bit, `stat.S_IX…`/`S_IEXEC`, or a decimal one. */
function chmodMode(mode: string): string | undefined {
  const m = mode.trim().replace(/^['"]|['"]$/g, '');
  if (/S_IX|S_IEXEC/.test(m) || EXECUTE_OCTAL.test(m)) return '+x';
  return /^\d+$/.test(m) && (Number(m) & 0o111) !== 0 ? '+x' : undefined;
}

const PYTHON: Calls = [
  [
    String.raw`\b(?:os\.(?:system|popen)|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput))\(\s*${ARG}`,
    (arg) => [{ kind: 'shell', line: arg(0) ?? '' }],
  ],
  [
    String.raw`\b(?:subprocess\.(?:run|call|check_call|check_output|Popen)|os\.(?:exec|spawn)[lv]p?e?)\(\s*(?:os\.P_\w+\s*,\s*)?${LIST}`,
    (_arg, m, consts) => [{ kind: 'command', words: items(m[1], consts) }],
  ],
  [String.raw`\bos\.exec[lv]p?e?\(\s*${ARG}`, (arg) => [{ kind: 'command', words: [arg(0) ?? ''] }]],
  [
    String.raw`\b(?:exec\(\s*open|runpy\.run_path|execfile)\(\s*${ARG}`,
    (arg) => [{ kind: 'command', words: ['python', arg(0) ?? ''] }],
  ],
  [
    String.raw`\bos\.chmod\(\s*${ARG}\s*,\s*([^()\n]{0,128})\)`,
    (arg, m) => (chmodMode(m[5]!) ? [{ kind: 'command', words: ['chmod', '+x', arg(0) ?? ''] }] : []),
  ],
  [
    String.raw`\bopen\(\s*${ARG}\s*,\s*(?:mode\s*=\s*)?['"][^'"\n]{0,8}[wax]`,
    (arg) => [{ kind: 'write', file: arg(0) ?? '' }],
  ],
  [String.raw`\bPath\(\s*${ARG}\s*\)\s*\.\s*write_(?:bytes|text)\b`, (arg) => [{ kind: 'write', file: arg(0) ?? '' }]],
  [String.raw`\burlretrieve\([^,()\n]{0,4096},\s*${ARG}`, (arg) => [{ kind: 'download', file: arg(0) ?? '' }]],
  [
    String.raw`\bwget\.download\([^()\n]{0,4096}?\bout\s*=\s*${ARG}`,
    (arg) => [{ kind: 'download', file: arg(0) ?? '' }],
  ],
  [
    String.raw`\b(?:tarfile\.open|tarfile\.TarFile|zipfile\.ZipFile)\(\s*(?:name\s*=\s*)?${ARG}`,
    (arg) => [{ kind: 'archive', file: arg(0) ?? '' }],
  ],
  [
    String.raw`\.extractall\(\s*(?:path\s*=\s*)?(?:${ARG})?`,
    (arg) => [{ kind: 'unpack', archive: '', into: arg(0) ?? '.' }],
  ],
  [
    String.raw`\bshutil\.unpack_archive\(\s*${ARG}(?:\s*,\s*${ARG})?`,
    (arg) => [{ kind: 'unpack', archive: arg(0) ?? '', into: arg(1) ?? '.' }],
  ],
  [
    String.raw`^\s*([A-Za-z_]\w{0,64})\s*=\s*${LIT}\s*$`,
    (_arg, m) => [{ kind: 'assign', name: m[1]!, value: m[2] ?? m[3] ?? m[4]! }],
  ],
];

/** Patterns compiled once, global; `lastIndex` reset for each use. */
const compiled = new Map<string, RegExp>();
const regex = (source: string): RegExp => {
  let re = compiled.get(source);
  if (!re) compiled.set(source, (re = new RegExp(source, 'g')));
  re.lastIndex = 0;
  return re;
};

/** Node's tar options: its archive (`file`/`f`) and folder (`cwd`/`C`). */
function tarOptions(text: string, consts: ReadonlyMap<string, string>): { archive: string | undefined; into: string } {
  const value = (keys: string): string | undefined => {
    const m = regex(String.raw`\b(?:${keys})\s*:\s*${ARG}`).exec(text);
    return m ? (m[1] ?? m[2] ?? m[3] ?? consts.get(m[4]!)) : undefined;
  };
  return { archive: value('file|f'), into: value('cwd|C') ?? '.' };
}

const NODE: Calls = [
  [String.raw`\b(?:exec|execSync)\(\s*${ARG}`, (arg) => [{ kind: 'shell', line: arg(0) ?? '' }]],
  [
    String.raw`\b(?:execFile|execFileSync|spawn|spawnSync)\(\s*${ARG}(?:\s*,\s*${LIST})?`,
    (arg, m, consts) => [{ kind: 'command', words: [arg(0) ?? '', ...items(m[5], consts)] }],
  ],
  [String.raw`\bfork\(\s*${ARG}`, (arg) => [{ kind: 'command', words: ['node', arg(0) ?? ''] }]],
  [
    String.raw`\b(?:require|import)\(\s*${ARG}`,
    (arg) => (/^\.{0,2}\//.test(arg(0) ?? '') ? [{ kind: 'command', words: ['node', arg(0)!] }] : []),
  ],
  [
    String.raw`\bchmod(?:Sync)?\(\s*${ARG}\s*,\s*([^()\n]{0,128})\)`,
    (arg, m) => (chmodMode(m[5]!) ? [{ kind: 'command', words: ['chmod', '+x', arg(0) ?? ''] }] : []),
  ],
  [
    String.raw`\b(?:writeFile|writeFileSync|createWriteStream)\(\s*${ARG}`,
    (arg) => [{ kind: 'write', file: arg(0) ?? '' }],
  ],
  [
    String.raw`\b(?:tar|require\(\s*['"]tar['"]\s*\))\.(?:x|extract)\(\s*\{([^{}\n]{0,1024})\}`,
    (_arg, m, consts) => [{ kind: 'unpack', ...tarOptions(m[1]!, consts) }],
  ],
  [String.raw`\bnew\s+AdmZip\(\s*${ARG}`, (arg) => [{ kind: 'archive', file: arg(0) ?? '' }]],
  [String.raw`\.extractAllTo\(\s*${ARG}`, (arg) => [{ kind: 'unpack', archive: '', into: arg(0) ?? '.' }]],
  [
    String.raw`\b(?:const|let|var)\s+([A-Za-z_$][\w$]{0,64})\s*=\s*${LIT}`,
    (_arg, m) => [{ kind: 'assign', name: m[1]!, value: m[2] ?? m[3] ?? m[4]! }],
  ],
];

const OTHER: Calls = [
  [
    String.raw`\b(?:system|exec|shell_exec|passthru|popen)\s*\(?\s*${LIT}`,
    (arg) => [{ kind: 'shell', line: arg(0) ?? '' }],
  ],
];

const CALLS: Record<Exclude<Language, 'shell'>, Calls> = {
  python: PYTHON,
  node: NODE,
  perl: OTHER,
  ruby: OTHER,
  php: OTHER,
};

/** What a line of `language` code does, in the order it does it; `consts` are the literals its program assigned before it. */
export function programActions(
  text: string,
  language: Exclude<Language, 'shell'>,
  consts: ReadonlyMap<string, string>,
): ProgramAction[] {
  const actions: ProgramAction[] = [];
  for (const [source, make] of CALLS[language]) {
    const re = regex(source);
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const found = m;
      const arg = (k: number): string | undefined =>
        found[1 + 4 * k] ??
        found[2 + 4 * k] ??
        found[3 + 4 * k] ??
        (found[4 + 4 * k] === undefined ? undefined : consts.get(found[4 + 4 * k]!));
      for (const doing of make(arg, found, consts)) actions.push({ ...doing, at: found.index });
      if (found[0].length === 0) re.lastIndex++;
    }
  }
  return actions.length > 1 ? actions.sort((a, b) => a.at - b.at) : actions;
}
