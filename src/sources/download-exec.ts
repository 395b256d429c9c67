import { posix } from 'node:path';

import { commandWords, samePath, shellCommands } from './internal/shell-words.ts';

/** Programs that run (or load) the file named as their argument. */
const INTERPRETERS = /^(?:[a-z]*sh|source|\.|python[\d.]*|node(?:js)?|deno|bun|perl|ruby|php)$/;
const URL_WORD = /^(?:https?|ftp):\/\//i;

function urlName(words: readonly string[]): string | undefined {
  const url = words.find((w) => URL_WORD.test(w));
  if (url === undefined || !URL.canParse(url)) return undefined;
  return posix.basename(new URL(url).pathname) || 'index.html';
}

/**
 * Files one command downloads to: `curl -o F` / `--output F` / `-O` (the URL's name) / `> F`,
 * `wget -O F` / `--output-document=F` / no -O (the URL's name, under `-P dir`), `fetch -o F`.
 * Standard output (`-`) is not a file. `words` are the command's own (see `commandWords`).
 */
export function downloadTargets(words: readonly string[]): string[] {
  const name = posix.basename(words[0] ?? '');
  if (name !== 'curl' && name !== 'wget' && name !== 'fetch') return [];
  const targets: string[] = [];
  let wgetOutput: string | undefined;
  let wgetDir: string | undefined;
  let remoteName = false;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    const next = words[i + 1];
    if (/^(?:>>?|&>)$/.test(w) && next !== undefined) targets.push(next);
    else if (/^--(?:output|output-document|directory-prefix)=/.test(w)) {
      const [flag, value = ''] = [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)];
      if (flag === '--directory-prefix') wgetDir = value;
      else if (name === 'wget') wgetOutput = value;
      else targets.push(value);
    } else if (/^--(?:output|output-document|directory-prefix)$/.test(w) && next !== undefined) {
      if (w === '--directory-prefix') wgetDir = next;
      else if (name === 'wget') wgetOutput = next;
      else targets.push(next);
    } else if (w === '--remote-name') remoteName = true;
    else if (/^-[A-Za-z]/.test(w) && !w.startsWith('--')) {
      // A cluster of short flags; the output flag takes the rest of the word or the next one.
      const flag = name === 'wget' ? 'O' : 'o';
      const at = w.indexOf(flag);
      if (name === 'curl' && w.slice(1).includes('O')) remoteName = true;
      if (name === 'wget' && w.startsWith('-P')) wgetDir = w.length > 2 ? w.slice(2) : next;
      if (at < 0) continue;
      const value = at === w.length - 1 ? next : w.slice(at + 1);
      if (value === undefined) continue;
      if (name === 'wget') wgetOutput = value;
      else targets.push(value);
    }
  }
  const fromUrl = urlName(words);
  if (name === 'curl' && remoteName && fromUrl) targets.push(fromUrl);
  if (name === 'wget') {
    if (wgetOutput !== undefined) targets.push(wgetOutput);
    else if (fromUrl) targets.push(wgetDir ? posix.join(wgetDir, fromUrl) : fromUrl);
  }
  return targets.filter((t) => t !== '-' && t !== '/dev/null');
}

/** A symbolic chmod mode that grants execute (`+x`, `u+rx`, `a=rwx`); octal modes are read digit by digit. */
const EXECUTE_MODE = /^[ugoa]*[+=][rwxXst]*[xX]/;

function grantsExecute(mode: string): boolean {
  if (/^[0-7]+$/.test(mode)) return [...mode.slice(-3)].some((d) => Number(d) % 2 === 1);
  return EXECUTE_MODE.test(mode);
}

/**
 * The files a command (its own words) runs, sources or marks executable: the command itself, the
 * arguments of a shell or interpreter, the arguments of a `chmod` that grants execute.
 */
function filesRun(words: readonly string[]): string[] {
  const [name = '', ...args] = words;
  const base = posix.basename(name);
  const runsArgs = INTERPRETERS.test(base) || (name === 'chmod' && args.some((a) => !a.startsWith('-') && grantsExecute(a)));
  return [name, ...(runsArgs ? args : [])].map(samePath);
}

/** A hook line that runs a file an earlier step of the same hook downloaded. */
export interface DownloadRun {
  /** 0-based index into the hook's lines. */
  line: number;
  file: string;
}

/**
 * Download-and-execute spread over steps: a file downloaded (`curl -o`, `wget -O`, `curl > f`…)
 * and then, later on the same line or any later line of the hook, run as a command, handed to a
 * shell or interpreter, sourced, or made executable (`chmod +x`, `chmod 755`). Lines are the hook's
 * own with comments stripped.
 */
export function downloadedThenRun(lines: readonly string[]): DownloadRun[] {
  // Looked up by name, so each command costs its own words, not the files downloaded so far.
  const downloaded = new Set<string>();
  const found: DownloadRun[] = [];
  lines.forEach((line, i) => {
    const onLine = new Set<string>();
    for (const all of shellCommands(line)) {
      const words = commandWords(all);
      for (const file of filesRun(words)) {
        if (downloaded.has(file) && !onLine.has(file)) {
          onLine.add(file);
          found.push({ line: i, file });
        }
      }
      for (const target of downloadTargets(words)) downloaded.add(samePath(target));
    }
  });
  return found;
}
