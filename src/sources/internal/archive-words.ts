/**
 * Commands that unpack an archive, from their own words (see `commandWords`): `tar`/`bsdtar` with
 * `x`, `unzip`, `7z x`, `python -m zipfile -e` / `-m tarfile -e`, and the single-file
 * decompressors (`gunzip`, `gzip -d`, `xz -d`, `bunzip2`, `zstd -d`…).
 */
import { posix } from 'node:path';

/** An archive unpacked into a folder; `archive` undefined is standard input. */
export interface Extraction {
  archive: string | undefined;
  into: string;
}

function tarExtraction(words: readonly string[]): Extraction | undefined {
  let extract = false;
  let archive: string | undefined;
  let into = '.';
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    const next = words[i + 1];
    if (w === '--extract' || w === '--get') extract = true;
    else if (w.startsWith('--file=')) archive = w.slice(7);
    else if (w.startsWith('--directory=')) into = w.slice(12);
    else if ((w === '--file' || w === '--directory') && next !== undefined) {
      if (w === '--file') archive = next;
      else into = next;
      i++;
    } else if (w.startsWith('-C') && !w.startsWith('--')) {
      into = w.length > 2 ? w.slice(2) : (next ?? into);
      if (w.length === 2) i++;
    } else if (/^-[A-Za-z]/.test(w) || (i === 1 && /^[A-Za-z]+$/.test(w))) {
      // A cluster of short options (`xzf`, `-xvzf`, `-xzfa.tgz`); `f` takes the rest of the word or the next one.
      if (w.includes('x')) extract = true;
      const f = w.indexOf('f');
      if (f < 0) continue;
      if (f < w.length - 1 && w.startsWith('-')) archive = w.slice(f + 1);
      else if (next !== undefined) {
        archive = next;
        i++;
      }
    }
  }
  if (!extract) return undefined;
  return { archive: archive === '-' ? undefined : archive, into };
}

function unzipExtraction(words: readonly string[]): Extraction | undefined {
  let archive: string | undefined;
  let into = '.';
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-d' && words[i + 1] !== undefined) into = words[++i]!;
    else if (w === '-P') i++;
    else if (w === '-x') break;
    else if (!w.startsWith('-') && archive === undefined) archive = w;
  }
  return archive === undefined ? undefined : { archive, into };
}

/** `python -m zipfile -e a.zip dir`, `python -m tarfile -e a.tgz [dir]`. */
function pythonExtraction(words: readonly string[]): Extraction | undefined {
  const m = words.indexOf('-m');
  if (m < 0 || !/^(?:zipfile|tarfile)$/.test(words[m + 1] ?? '')) return undefined;
  const e = words.findIndex((w, i) => i > m + 1 && (w === '-e' || w === '--extract'));
  const archive = e < 0 ? undefined : words[e + 1];
  return archive === undefined ? undefined : { archive, into: words[e + 2] ?? '.' };
}

/** `7z x a.7z -odir` (`e` flattens, still extracts). */
function sevenZipExtraction(words: readonly string[]): Extraction | undefined {
  if (words[1] !== 'x' && words[1] !== 'e') return undefined;
  const archive = words.slice(2).find((w) => !w.startsWith('-'));
  const out = words.find((w) => w.startsWith('-o') && w.length > 2);
  return archive === undefined ? undefined : { archive, into: out ? out.slice(2) : '.' };
}

/** The archive a command unpacks and where, if it unpacks one. */
export function extraction(words: readonly string[]): Extraction | undefined {
  const name = posix.basename(words[0] ?? '');
  if (/^(?:bsd|g)?tar$/.test(name)) return tarExtraction(words);
  if (name === 'unzip') return unzipExtraction(words);
  if (/^python[\d.]*$/.test(name)) return pythonExtraction(words);
  if (/^7z[az]?$/.test(name)) return sevenZipExtraction(words);
  return undefined;
}

const DECOMPRESSORS = /^(?:gunzip|unxz|unlzma|bunzip2|unzstd|uncompress)$/;
const WITH_D = /^(?:gzip|xz|lzma|bzip2|zstd|pigz|brotli)$/;
const SUFFIX = /\.(?:gz|z|xz|lzma|bz2|zst|br|Z)$/;

/** A single-file decompression: `from` decompressed to `to`, or to standard output (`to` undefined). */
export interface Decompression {
  from: string | undefined;
  to: string | undefined;
}

/** What a decompressor reads and writes (`gunzip f.gz` → `f`, `gzip -dc f.gz` → stdout, `gunzip` alone: stdin → stdout). */
export function decompression(words: readonly string[]): Decompression | undefined {
  const name = posix.basename(words[0] ?? '');
  const flags = words
    .slice(1)
    .filter((w) => /^-[A-Za-z]+$/.test(w))
    .join('');
  if (!DECOMPRESSORS.test(name) && !(WITH_D.test(name) && flags.includes('d')) && name !== 'zcat') return undefined;
  const from = words.slice(1).find((w) => !w.startsWith('-'));
  if (from === undefined || name === 'zcat' || flags.includes('c')) return { from, to: undefined };
  return { from, to: from.replace(SUFFIX, '').replace(/\.tgz$/, '.tar') };
}
