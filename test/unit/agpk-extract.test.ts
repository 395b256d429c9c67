/**
 * Safe extraction of AGPK archives: hostile archives built by hand are refused with a precise
 * message before anything is written — `..`, absolute paths, symlinks, devices, hard links, a file
 * inside a file, names differing only in case or Unicode form, names over 255 bytes (PAX), a 10 GB
 * declared size (header only), 100,000 entries — setuid bits never survive, data after the
 * end-of-archive blocks is never inflated, and a name the file system refuses only as it is
 * written is an unsafe-archive error the caller sees (issue 31: it used to end the process).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { safeExtract } from '../../src/agpk/index.ts';
import { END_OF_ARCHIVE, ustarHeader } from '../../src/agpk/internal/ustar.ts';
import { rawArchive, type RawEntry, tempDir } from '../support/agpk.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let n = 0;

beforeAll(async () => {
  tmp = await tempDir();
});
afterAll(() => tmp.dispose());

async function extract(archive: Buffer): Promise<{ dest: string; result: Promise<unknown> }> {
  n += 1;
  const file = join(tmp.path, `a${n}.agpk`);
  await writeFile(file, archive);
  const dest = join(tmp.path, `out${n}`);
  return { dest, result: safeExtract(file, dest) };
}

const file = (path: string, content = 'x', mode = 0o644): RawEntry => ({ path, type: '0', mode, content });

describe('safeExtract', () => {
  it('extracts a plain archive, dropping setuid/setgid bits and normalising modes', async () => {
    const archive = rawArchive([
      { path: 'payload/', type: '5', mode: 0o777 },
      file('payload/run', '#!/bin/sh\n', 0o6777),
      file('a.txt', 'hi', 0o666),
    ]);
    const { dest, result } = await extract(archive);
    // The archive's own sha256 comes from the same read.
    await expect(result).resolves.toEqual({
      entries: 3,
      bytes: 12,
      sha256: createHash('sha256').update(archive).digest('hex'),
    });
    expect((await stat(join(dest, 'payload/run'))).mode & 0o7777).toBe(0o755);
    expect((await stat(join(dest, 'a.txt'))).mode & 0o7777).toBe(0o644);
    expect(await readFile(join(dest, 'a.txt'), 'utf8')).toBe('hi');
  });

  it.each<[string, RawEntry[], string]>([
    ['a ../ entry', [file('ok.txt'), file('../evil.txt')], 'unsafe archive: path "../evil.txt" contains ".."'],
    [
      'a nested ../ entry',
      [file('payload/../../evil.txt')],
      'unsafe archive: path "payload/../../evil.txt" contains ".."',
    ],
    ['an absolute path', [file('/etc/cron.d/evil')], 'unsafe archive: absolute path "/etc/cron.d/evil"'],
    [
      'a symlink escaping the root',
      [{ path: 'payload/link', type: '2', mode: 0o777, linkpath: '../../../etc' }],
      'unsafe archive: symbolic link "payload/link" (packages hold no links)',
    ],
    [
      'an absolute symlink',
      [{ path: 'link', type: '2', mode: 0o777, linkpath: '/etc/passwd' }],
      'unsafe archive: symbolic link "link" (packages hold no links)',
    ],
    // Inside the root on paper, yet `i/..` through a link to the root's parent walked out of it.
    [
      'a symlink chain that only looks inside the root',
      [
        { path: 'a/b/i', type: '2', mode: 0o777, linkpath: '../..' },
        { path: 'agpk.json', type: '2', mode: 0o777, linkpath: 'a/b/i/../../../etc/passwd' },
      ],
      'unsafe archive: symbolic link "a/b/i" (packages hold no links)',
    ],
    ['a file inside a file', [file('a'), file('a/b')], 'unsafe archive: "a/b" is inside "a", which is a file'],
    ['a file where a directory was', [file('a/b'), file('a')], 'unsafe archive: "a" is both a directory and a file'],
    [
      'two names differing only in case',
      [file('USAGE.md'), file('usage.md')],
      'unsafe archive: "usage.md" differs from another entry only in case',
    ],
    [
      'a hard link',
      [file('a'), { path: 'b', type: '1', mode: 0o644, linkpath: 'a' }],
      'unsafe archive: hard link "b" (hard links are not allowed)',
    ],
    ['a character device', [{ path: 'dev', type: '3', mode: 0o644 }], 'unsafe archive: device file "dev"'],
    ['a FIFO', [{ path: 'pipe', type: '6', mode: 0o644 }], 'unsafe archive: FIFO "pipe"'],
    ['a duplicate entry', [file('a'), file('a')], 'unsafe archive: duplicate entry "a"'],
    // A PAX header lets a name be any length: the write of it failed (ENAMETOOLONG) unobserved and
    // ended the process (issue 31). Now the header check refuses it before anything is written.
    [
      'a 300-byte file name (PAX)',
      [file('agpk.json', '{}'), { ...file('long'), pax: { path: 'n'.repeat(300) } }],
      `unsafe archive: "${'n'.repeat(80)}…" has a name of 300 bytes, over the 255 a file system holds`,
    ],
    [
      'a 256-byte folder name (PAX)',
      [{ ...file('long'), pax: { path: `payload/${'d'.repeat(256)}/a.txt` } }],
      'has a name of 256 bytes, over the 255',
    ],
    [
      'a 1025-byte path of short names (PAX)',
      [{ ...file('long'), pax: { path: `${'p/'.repeat(511)}abc` } }],
      'is over 1024 bytes long',
    ],
    // The message is stored with a source's findings and mailed: a megabyte-long name is cut.
    [
      'a 100 KB absolute name (PAX)',
      [{ ...file('x'), pax: { path: `/${'a'.repeat(100_000)}` } }],
      `unsafe archive: absolute path "/${'a'.repeat(79)}…"`,
    ],
    [
      'two names differing only in Unicode form',
      [file('caf\u00e9.md'), file('cafe\u0301.md')],
      'differs from another entry only in case or Unicode form',
    ],
  ])('refuses %s and writes nothing', async (_name, entries, message) => {
    const { dest, result } = await extract(rawArchive(entries));
    await expect(result).rejects.toThrow(message);
    expect(existsSync(dest)).toBe(false);
    expect(existsSync(join(tmp.path, 'evil.txt'))).toBe(false);
  });

  // Names the header check lets through can still be refused by the file system (here: too long
  // under a deep folder). The refusal is an unsafe archive, seen by the caller; before, the write's
  // rejection went unobserved while later entries were read, and the process ended (issue 31).
  it.each([
    ['a small file', 1],
    ['a streamed file', 4 * 1024 * 1024 + 1],
  ])(
    'turns a write the file system refuses (%s) into an unsafe-archive error and leaves nothing',
    async (_what, size) => {
      let deep = join(tmp.path, `deep${++n}`);
      while (Buffer.byteLength(deep) < 3_500) deep = join(deep, 'd'.repeat(250));
      await mkdir(deep, { recursive: true });
      const folder = `${'e'.repeat(250)}/${'f'.repeat(250)}`;
      const name = 'g'.repeat(4_096 - Buffer.byteLength(join(deep, 'out', folder)));
      const path = join(tmp.path, `w${n}.agpk`);
      await writeFile(
        path,
        rawArchive([
          file('agpk.json', '{}'),
          { ...file('x'), content: Buffer.alloc(size, 1), pax: { path: `${folder}/${name}` } },
          file('z.txt'),
        ]),
      );
      const dest = join(deep, 'out');
      await expect(safeExtract(path, dest)).rejects.toMatchObject({
        code: 'bad_request',
        message: expect.stringMatching(
          /^unsafe archive: "e+…" cannot be written on this file system \(ENAMETOOLONG\)$/,
        ),
      });
      expect(existsSync(dest)).toBe(false);
    },
  );

  it('stops reading at the end-of-archive blocks: a gzip bomb appended after them is never inflated', async () => {
    // 64 MiB of zeros after a valid archive compress to ~64 KB; tar used to buffer and recopy all of it.
    const valid = rawArchive([file('a.txt', 'hi')]);
    const archive = Buffer.concat([valid, gzipSync(Buffer.alloc(64 * 1024 * 1024))]);
    const { dest, result } = await extract(archive);
    await expect(result).resolves.toEqual({
      entries: 1,
      bytes: 2,
      sha256: createHash('sha256').update(archive).digest('hex'),
    });
    expect(await readFile(join(dest, 'a.txt'), 'utf8')).toBe('hi');
  });

  it('refuses a 10 GB sparse-bomb header from the header alone', async () => {
    // Only the header is built: the declared size (base-256 encoded) is what must stop extraction.
    const bomb = rawArchive([{ path: 'payload/disk.img', type: '0', mode: 0o644, size: 10n * 1024n ** 3n }]);
    expect(bomb.length).toBeLessThan(4096);
    const { dest, result } = await extract(bomb);
    await expect(result).rejects.toThrow(
      'unsafe archive: "payload/disk.img" declares 10737418240 bytes, over the 1073741824-byte file limit',
    );
    expect(existsSync(dest)).toBe(false);
  });

  it('refuses an archive of 100,000 entries before writing any', async () => {
    const blocks: Buffer[] = [];
    for (let i = 0; i < 100_000; i++) blocks.push(ustarHeader({ path: `f/${i}`, type: '0', mode: 0o644 }));
    blocks.push(END_OF_ARCHIVE);
    const { gzipSync } = await import('node:zlib');
    const { dest, result } = await extract(gzipSync(Buffer.concat(blocks), { level: 1 }));
    await expect(result).rejects.toThrow('unsafe archive: more than 50000 entries');
    expect(existsSync(dest)).toBe(false);
  });

  it('refuses garbage that is not a tar archive', async () => {
    const { result } = await extract(Buffer.from('this is not an archive at all'.repeat(40)));
    await expect(result).rejects.toThrow(/unsafe archive/);
  });
});

describe('validate of an archive (read in one pass, nothing written)', () => {
  it('refuses the same unsafe archives as extraction, as a report', async () => {
    const { validateTarget, loadAgpkSchemas } = await import('../../src/agpk/index.ts');
    for (const [entries, why] of [
      [[file('../evil.txt')], /\.\./],
      [[{ path: 'link', type: '1', mode: 0o644, linkpath: 'a.txt' } as RawEntry], /hard link/],
      [[file('/etc/passwd')], /absolute path/],
      [[{ ...file('long'), pax: { path: 'n'.repeat(300) } }], /has a name of 300 bytes/],
    ] as const) {
      const path = join(tmp.path, `v${++n}.agpk`);
      await writeFile(path, rawArchive([...entries]));
      const report = await validateTarget(path, loadAgpkSchemas());
      expect(report.ok).toBe(false);
      expect(report.problems[0]?.message).toMatch(why);
    }
  });
});
