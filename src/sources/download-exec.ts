import { posix } from 'node:path';

import { decompression, extraction } from './internal/archive-words.ts';
import { downloadOutputs } from './internal/download-words.ts';
import { createFolderSet, resolvePath } from './internal/hook-paths.ts';
import { programActions } from './internal/program-calls.ts';
import { filesRun, inlineCode } from './internal/run-words.ts';
import { commandWords, parseCommands, samePath } from './internal/shell-words.ts';
import { PROGRAM_MARKS } from './program-rules.ts';
import type { HookLine, ProgramLanguage } from './read-hook.ts';

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
 * folder the hook has `cd`-ed to (as written, from the root, after a `cd` the scan cannot follow).
 * `sh -c '…'` is read as the line it holds; a file written from a here-document whose body
 * downloads holds a download. Lines are the hook's own as `readHook` reads them.
 */
export function downloadedThenRun(lines: readonly HookLine[]): DownloadRun[] {
  // Looked up by name (and folder by component), so each command costs its own words, not the files downloaded so far.
  const downloaded = new Set<string>();
  const unpacked = createFolderSet();
  const found: DownloadRun[] = [];
  // The folder `cd` went to; undefined once the scan cannot tell (`cd "$(dirname "$0")"`, a cd
  // deeper than any real folder), and paths are then read as written, from the root hooks start in.
  let cwd: string | undefined = '.';
  let previous: string | undefined = cwd;
  const folders: (string | undefined)[] = [];
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

  /** One command (its words, as the tokenizer gives them); `fed` says a download comes in on its standard input. Answers whether its standard output carries one. */
  function command(all: readonly string[], fed: boolean, i: number, onLine: Set<string>): boolean {
    const words = commandWords(all);
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
    if (inline?.language === 'shell') shellLine(inline.code, i, onLine);
    else if (inline) programLine(inline.code, inline.language, newUnit(), i, onLine);
    const name = posix.basename(words[0] ?? '');
    const args = words.slice(1).filter((w) => !w.startsWith('-'));
    const unpack = extraction(words);
    if (unpack && (unpack.archive === undefined ? fed : isDownloaded(unpack.archive))) unpackedInto(unpack.into, unpack.archive ?? 'a download piped into it');
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
    const carries = fed || download?.stdout === true || (decompressed !== undefined && decompressed.to === undefined && (decompressed.from === undefined ? fed : isDownloaded(decompressed.from))) || (name === 'cat' && args.some(isDownloaded));
    if (carries) {
      all.forEach((w, j) => {
        if (STDOUT_TO.test(w) && all[j + 1] !== undefined) markDownloaded(all[j + 1]!);
      });
      if (name === 'tee') for (const target of args) markDownloaded(target);
    }
    if (name === 'cd' || name === 'pushd') {
      if (name === 'pushd') folders.push(cwd);
      cd(args[0]);
    } else if (name === 'popd') {
      previous = cwd;
      cwd = folders.length > 0 ? folders.pop() : '.';
    }
    return carries;
  }

  /** One line of shell (or the code of a `sh -c` on it); `onLine` keeps one finding per file and line. */
  function shellLine(line: string, i: number, onLine: Set<string>, writes?: ReadonlyMap<number, string[]>): void {
    // Whether the command's standard input is a download (the previous command of a pipe carries one).
    let fed = false;
    for (const [k, { words, after }] of parseCommands(line).entries()) {
      // A here-document whose body downloads, written to a file: the file holds a download.
      for (const file of writes?.get(k) ?? []) markDownloaded(file);
      fed = command(words, after === '|' && fed, i, onLine);
    }
  }

  /** One line of another language's program (`unit`: what that program did on its earlier lines). */
  function programLine(text: string, language: ProgramLanguage, unit: Unit, i: number, onLine: Set<string>): void {
    // A program that downloads: what it writes may be the download (the order of its calls is not followed).
    if (!unit.downloads && PROGRAM_MARKS[language].downloads.test(text)) {
      unit.downloads = true;
      for (const file of unit.written.splice(0)) markDownloaded(file);
    }
    for (const action of programActions(text, language, unit.consts)) {
      if (action.kind === 'shell') shellLine(action.line, i, onLine);
      else if (action.kind === 'command') command(action.words, false, i, onLine);
      else if (action.kind === 'download') markDownloaded(action.file);
      else if (action.kind === 'write') {
        if (unit.downloads) markDownloaded(action.file);
        else unit.written.push(action.file);
      } else if (action.kind === 'archive') unit.archive = action.file;
      else if (action.kind === 'assign') unit.consts.set(action.name, action.value);
      else {
        // `extractall()` unpacks the archive opened before it; node's tar without a file, the stream piped into it.
        const archive = action.archive === '' ? unit.archive : action.archive;
        if (archive === undefined ? unit.downloads : isDownloaded(archive)) unpackedInto(action.into, archive ?? 'a download piped into it');
      }
    }
  }

  let unit = { id: 0, state: newUnit() };
  lines.forEach((line, i) => {
    // Program text split as shell reads `tarfile.open('a.tgz')` as a command `a.tgz`: its shell is what it hands a shell.
    if (!line.program) return shellLine(line.text, i, new Set(), line.writesDownloads);
    if (line.program.unit !== unit.id) unit = { id: line.program.unit, state: newUnit() };
    programLine(line.text, line.program.language, unit.state, i, new Set());
  });
  return found;
}

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
