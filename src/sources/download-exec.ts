import { posix } from 'node:path';

import { decompression, extraction } from './internal/archive-words.ts';
import { downloadOutputs } from './internal/download-words.ts';
import { createFolderSet, resolvePath } from './internal/hook-paths.ts';
import { filesRun, inlineCode } from './internal/run-words.ts';
import { commandWords, parseCommands, samePath } from './internal/shell-words.ts';
import type { HookLine } from './read-hook.ts';

/** Commands that copy their first arguments to their last (into it, when it is a folder). */
const COPIES = /^(?:cp|mv|install|ln)$/;
/** The longest folder `cd` is followed into: longer than real folders, short enough to join to every path. */
const MAX_FOLDER = 256;
/** Redirections that send a command's standard output to a file. */
const STDOUT_TO = /^(?:1?>>?|&>>?)$/;

/** A hook line that runs a file an earlier step of the same hook downloaded. */
export interface DownloadRun {
  /** 0-based index into the hook's lines. */
  line: number;
  file: string;
  /** The downloaded archive the file may come from, when it is not itself a download. */
  archive?: string;
}

/**
 * Download-and-execute spread over steps: a file downloaded (`curl -o`, `wget -O`, `curl > f`…),
 * copied or moved from one, decompressed from one, or fed a download through a pipe (`| tee f`,
 * `| gunzip > f`), and then, later on the same line or any later line of the hook, run as a
 * command, handed to a shell or interpreter, sourced, or made executable (`chmod +x`, `chmod 755`);
 * also any file in a folder a downloaded archive was unpacked into (`tar x`, `unzip`, `7z x`,
 * `python -m zipfile -e`, `curl … | tar xz`) run by its path. Paths are compared as seen from the
 * folder the hook has `cd`-ed to, and as written (the `cd` may be one the scan cannot follow).
 * `sh -c '…'` is read as the line it holds; a file written from a here-document whose body
 * downloads holds a download. Lines are the hook's own as `readHook` reads them.
 */
export function downloadedThenRun(lines: readonly HookLine[]): DownloadRun[] {
  // Looked up by name (and folder by component), so each command costs its own words, not the files downloaded so far.
  const downloaded = new Set<string>();
  const unpacked = createFolderSet();
  const found: DownloadRun[] = [];
  // The folder `cd` went to, undefined once the scan cannot tell (a cd deeper than any real folder).
  let cwd: string | undefined = '.';
  let previous: string | undefined = cwd;
  const folders: (string | undefined)[] = [];
  const forms = (path: string): string[] => (cwd === '.' || cwd === undefined ? [resolvePath('.', path)] : [resolvePath(cwd, path), resolvePath('.', path)]);
  const isDownloaded = (path: string): boolean => forms(path).some((p) => downloaded.has(p));
  const markDownloaded = (path: string): void => {
    for (const p of forms(path)) downloaded.add(p);
  };
  const cd = (to: string | undefined): void => {
    // A relative cd from a folder the scan lost stays lost.
    const next = to === undefined ? '~' : to === '-' ? previous : cwd === undefined && !/^[/~$]/.test(to) ? undefined : resolvePath(cwd ?? '.', to);
    previous = cwd;
    // Each relative path is joined to the folder, so a folder grown by cd after cd would make every later path cost its length.
    cwd = next !== undefined && next.length <= MAX_FOLDER ? next : undefined;
  };

  /** One line of shell (or the code of a `sh -c` on it); `onLine` keeps one finding per file and line. */
  function shellLine(line: string, i: number, onLine: Set<string>, writes?: ReadonlyMap<number, string[]>): void {
    // Whether the command's standard input is a download (the previous command of a pipe carries one).
    let fed = false;
    for (const [k, { words: all, after }] of parseCommands(line).entries()) {
      if (after !== '|') fed = false;
      // A here-document whose body downloads, written to a file: the file holds a download.
      for (const file of writes?.get(k) ?? []) markDownloaded(file);
      const words = commandWords(all);
      for (const { path, named } of filesRun(words)) {
        const key = samePath(path);
        if (onLine.has(key)) continue;
        const archive = named ? undefined : forms(path).map((p) => unpacked.holding(p)).find((a) => a !== undefined);
        if (isDownloaded(path) || archive !== undefined) {
          onLine.add(key);
          found.push({ line: i, file: key, ...(archive !== undefined && !isDownloaded(path) ? { archive } : {}) });
        }
      }
      const inline = inlineCode(words);
      if (inline?.language === 'shell') shellLine(inline.code, i, onLine);
      const name = posix.basename(words[0] ?? '');
      const args = words.slice(1).filter((w) => !w.startsWith('-'));
      const unpack = extraction(words);
      if (unpack && (unpack.archive === undefined ? fed : isDownloaded(unpack.archive))) {
        for (const p of forms(unpack.into)) unpacked.add(p, unpack.archive ?? 'a download piped into it');
      }
      const decompressed = decompression(words);
      if (decompressed?.from !== undefined && decompressed.to !== undefined && isDownloaded(decompressed.from)) markDownloaded(decompressed.to);
      if (COPIES.test(name) && args.length >= 2 && args.slice(0, -1).some(isDownloaded)) {
        const into = args.at(-1)!;
        markDownloaded(into);
        for (const from of args.slice(0, -1)) markDownloaded(posix.join(into, posix.basename(from)));
      }
      const download = downloadOutputs(words);
      for (const target of download?.files ?? []) markDownloaded(target);
      // What this command writes to its standard output comes from a download: the pipe or redirect it feeds gets one.
      const carries: boolean = fed || download?.stdout === true || (decompressed !== undefined && decompressed.to === undefined && (decompressed.from === undefined ? fed : isDownloaded(decompressed.from))) || (name === 'cat' && args.some(isDownloaded));
      if (carries) {
        all.forEach((w, k) => {
          if (STDOUT_TO.test(w) && all[k + 1] !== undefined) markDownloaded(all[k + 1]!);
        });
        if (name === 'tee') for (const target of args) markDownloaded(target);
      }
      fed = carries;
      if (name === 'cd' || name === 'pushd') {
        if (name === 'pushd') folders.push(cwd);
        cd(args[0]);
      } else if (name === 'popd') {
        previous = cwd;
        cwd = folders.length > 0 ? folders.pop() : '.';
      }
    }
  }

  lines.forEach((line, i) => shellLine(line.text, i, new Set(), line.writesDownloads));
  return found;
}
