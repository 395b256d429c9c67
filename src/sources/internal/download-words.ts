/** The files a `curl`, `wget` or `fetch` command downloads to, from its own words. */
import { posix } from 'node:path';

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
  return downloadOutputs(words)?.files ?? [];
}

/** A download's output files, and whether it writes the download to standard output. */
export interface DownloadOutputs {
  files: string[];
  stdout: boolean;
}

/** {@link downloadTargets}, and standard output; undefined when the command is no download. */
export function downloadOutputs(words: readonly string[]): DownloadOutputs | undefined {
  const name = posix.basename(words[0] ?? '');
  if (name !== 'curl' && name !== 'wget' && name !== 'fetch') return undefined;
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
  // curl without an output writes to standard output, as does `-o -` (wget and fetch name a file).
  const stdout = targets.includes('-') || (name === 'curl' && targets.length === 0);
  return { files: targets.filter((t) => t !== '-' && t !== '/dev/null'), stdout };
}
