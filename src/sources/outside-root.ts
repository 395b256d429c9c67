import { posix } from 'node:path';

import { downloadTargets } from './internal/download-words.ts';
import { allCommands, commandWords } from './internal/shell-words.ts';

/** Commands whose last argument (or redirect target) is a path written to; also first in a substitution (`$(cp a /x)`). */
const WRITE_COMMANDS = /(?:^|[;&|(`]\s*|\s)(?:cp|mv|install|ln|mkdir|touch|rm|rsync|tee|dd)\s+([^;&|\n)`]+)/g;
const REDIRECT = /(?:^|[^0-9&<>])(?:\d?>>?|&>)\s*("[^"]*"|'[^']*'|[^\s;&|]+)/g;
const DOWNLOADER = /\b(?:curl|wget|fetch)\b/;
const HARMLESS = /^\/dev\/(?:null|stdout|stderr|tty|fd\/\d)$/;
const ROOT = /^\$\{?AGPK_INSTALL_ROOT\}?(?=\/|$)/;

/** An inline program: `python -c`, `node -e`/`-p`, `perl -e`/`-E`, `ruby -e`. */
const INLINE =
  /\b(?:python[\d.]*\s+(?:-\w+\s+)*-c|node(?:js)?\s+(?:-\w+\s+)*-[ep]|perl\s+(?:-\w+\s+)*-[eE]|ruby\s+(?:-\w+\s+)*-e)\b/;
/** A quoted absolute or home path in program text (no longer than PATH_MAX). */
const PATH = String.raw`(['"])((?:\/|~\/)[^'"]{0,4096})`;
/** The arguments before a destination: a literal destination further than this from the call is not read. */
const ARGS = String.raw`[^)]{0,256}?`;
/**
 * Writes to a literal path in inline programs (the path is capture group 2). Every run of
 * arbitrary text is bounded (`ARGS`, `[$\w]{1,64}`): a pattern that can start at each `cp(` or
 * `open` of a line and scan to its end is quadratic on a long line of them.
 */
const INLINE_WRITES: readonly RegExp[] = [
  // python (and node's openSync): open('/x', 'w'|'a'|'x'|'+'), Path('/x').write_text(…), shutil.copy(…, '/x')
  new RegExp(String.raw`\bopen\(\s*${PATH}\1\s*,\s*(?:mode\s*=\s*)?['"][^'"]*[wax+]`, 'g'),
  new RegExp(
    String.raw`\bPath\(\s*${PATH}\1\s*\)\s*\.\s*(?:write_text|write_bytes|touch|mkdir|unlink|rmdir|symlink_to)\b`,
    'g',
  ),
  new RegExp(String.raw`\b(?:shutil\.(?:copy\w*|move)|os\.(?:rename|replace|symlink|link))\(${ARGS},\s*${PATH}\1`, 'g'),
  new RegExp(String.raw`\bos\.(?:remove|unlink|makedirs|mkdir|rmdir)\(\s*${PATH}\1`, 'g'),
  // node: fs.writeFileSync('/x'), appendFile, createWriteStream, mkdir, rm…; copyFile(…, '/x')
  new RegExp(
    String.raw`\b(?:writeFile|appendFile|createWriteStream|mkdir|rm|rmdir|unlink|truncate)(?:Sync)?\(\s*${PATH}\1`,
    'g',
  ),
  new RegExp(String.raw`\b(?:copyFile|cp|rename|link|symlink)(?:Sync)?\(${ARGS},\s*${PATH}\1`, 'g'),
  // perl: open(F, '>', '/x'), open(F, ">/x"), open my $f, '>>', '/x'
  new RegExp(String.raw`\bopen\s*(?:\(\s*)?(?:my\s+)?[$\w]{1,64}\s*,\s*['"]\+?>>?['"]\s*,\s*${PATH}\1`, 'g'),
  new RegExp(
    String.raw`\bopen\s*(?:\(\s*)?(?:my\s+)?[$\w]{1,64}\s*,\s*(['"])\+?>>?\s*((?:\/|~\/)[^'"]{0,4096})\1`,
    'g',
  ),
];

/** Hooks run in the install root, so a relative path is under it unless `..` climbs out. */
function escapesRoot(rest: string): boolean {
  return posix.normalize(`/root/${rest}`).split('/')[1] !== 'root';
}

function outside(target: string): boolean {
  const t = target.replace(/^["']|["']$/g, '').replace(/\$\{(\w+)\}/g, '$$$1');
  if (t === '' || t.startsWith('-')) return false;
  if (ROOT.test(t)) return escapesRoot(t.replace(ROOT, ''));
  if (HARMLESS.test(t)) return false;
  if (t.startsWith('/') || t.startsWith('~') || /^\$HOME(?:\/|$)/.test(t)) return true;
  return !t.startsWith('$') && escapesRoot(t);
}

/**
 * Paths a script line writes to outside `$AGPK_INSTALL_ROOT`: absolute or home paths, and paths
 * whose `..` climb out of the root (or out of the hook's working folder, which is the root), from
 * redirections, write commands, download outputs (`curl -o`, `wget -O`) and inline programs;
 * `program` says the whole line is program text (a here-document fed to `python3 -`, say).
 */
export function writesOutsideRoot(line: string, program = false): string[] {
  const found: string[] = [];
  for (const m of line.matchAll(REDIRECT)) if (m[1] && outside(m[1])) found.push(m[1].replace(/^["']|["']$/g, ''));
  for (const m of line.matchAll(WRITE_COMMANDS)) {
    const words = (m[1] ?? '').trim().split(/\s+/);
    // `find … -exec cp {} /x \;` or `-exec cp -t /x {} +`: find's terminator is no argument.
    while (words.length > 0 && /^(?:\\|\+|\\;|;)$/.test(words.at(-1)!)) words.pop();
    const args = words.filter((a) => !a.startsWith('-'));
    // `cp -t /x a b`, `--target-directory=/x`: the destination is named first.
    const into = words.findIndex((w) => w === '-t' || w === '--target-directory');
    const named =
      into >= 0
        ? words[into + 1]
        : words.find((w) => w.startsWith('--target-directory='))?.slice('--target-directory='.length);
    // `dd of=/x`; otherwise the last argument is the destination (mkdir/touch/rm: every argument).
    const targets = /\bdd\s/.test(m[0])
      ? args.filter((a) => a.startsWith('of=')).map((a) => a.slice(3))
      : /\b(?:mkdir|touch|rm)\s/.test(m[0])
        ? args
        : named !== undefined && /\b(?:cp|mv|install|ln)\s/.test(m[0])
          ? [named]
          : args.slice(-1);
    for (const t of targets) if (outside(t)) found.push(t.replace(/^["']|["']$/g, ''));
  }
  // Commands (in substitutions too) read only for a download's output, so only on a line that names a downloader.
  if (DOWNLOADER.test(line))
    for (const { words } of allCommands(line))
      for (const t of downloadTargets(commandWords(words))) if (outside(t)) found.push(t);
  if (program || INLINE.test(line))
    for (const re of INLINE_WRITES) for (const m of line.matchAll(re)) found.push(m[2]!);
  return [...new Set(found)];
}
