/**
 * AGPK scaffold + pack: a scaffolded package validates as is and carries a license, so the market's
 * scan finds nothing in it; packing is reproducible (same tree,
 * same sha256, whatever the files' times and owners) and readable by the system `tar`, whose
 * listing shows sorted entries, root:root, epoch mtime and 0644/0755 modes; `sha256sum` agrees.
 */
import { execFileSync } from 'node:child_process';
import { chmod, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  loadAgpkSchemas,
  packPackage,
  parseDigests,
  scaffoldPackage,
  validatePackageDir,
  validateTarget,
} from '../../src/agpk/index.ts';
import { loadDenyList, scanPackageTarget } from '../../src/sources/index.ts';
import { tempDir } from '../support/agpk.ts';

const schemas = loadAgpkSchemas();
let tmp: Awaited<ReturnType<typeof tempDir>>;
let pkg: string;

beforeEach(async () => {
  tmp = await tempDir();
  pkg = join(tmp.path, 'pkg');
  await scaffoldPackage(pkg, { id: 'acme.hello', name: 'Hello', version: '1.0.0' });
});
afterEach(() => tmp.dispose());

describe('agpk scaffold', () => {
  it('creates a package that validates as is', async () => {
    const report = await validatePackageDir(pkg, schemas);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.package_id).toBe('acme.hello');
    expect(report.warnings.map((w) => w.path)).toContain('$.ahcp.signed');
  });

  it("writes an MIT LICENSE naming the package, so the market's scan finds nothing to report", async () => {
    const license = await readFile(join(pkg, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the authors of Hello\n/);
    const other = join(tmp.path, 'dated');
    await scaffoldPackage(other, { id: 'acme.dated', name: 'Dated', version: '1.0.0' }, () => new Date('2031-06-01'));
    expect(await readFile(join(other, 'LICENSE'), 'utf8')).toContain('Copyright (c) 2031 the authors of Dated\n');
    const findings = await scanPackageTarget(pkg, { denyList: loadDenyList(undefined) });
    expect(findings).toEqual([]);
    const archive = await packPackage(pkg);
    expect(await scanPackageTarget(archive.archive, { denyList: loadDenyList(undefined) })).toEqual([]);
  });

  it('refuses a bad id and a non-empty folder', async () => {
    await expect(scaffoldPackage(join(tmp.path, 'x'), { id: '../evil', name: 'x', version: '1' })).rejects.toThrow(
      /invalid --id/,
    );
    await expect(scaffoldPackage(pkg, { id: 'a', name: 'x', version: '1' })).rejects.toThrow(
      /not empty: scaffold makes a new package in an empty or absent folder$/,
    );
    await expect(scaffoldPackage(join(tmp.path, 'y'), { id: 'a', name: 'x', version: '1 0' })).rejects.toThrow(
      'invalid --version "1 0": letters, digits and . _ + ~ -, starting with a letter or digit (max 64; semantic versioning such as 1.0.0 recommended)',
    );
  });
});

describe('agpk pack', () => {
  it('says what is wrong with the folder or its agpk.json before packing anything', async () => {
    // A missing folder was "agpk.json is missing"; a syntax error "agpk.json is not a JSON object (Expected ',' …)".
    await expect(packPackage(join(tmp.path, 'nothere'))).rejects.toThrow(`${join(tmp.path, 'nothere')} does not exist`);
    await expect(packPackage(tmp.path)).rejects.toThrow(
      `agpk.json is missing in ${tmp.path}: is it a package folder? (\`plaza agpk scaffold\` makes one)`,
    );
    await writeFile(join(pkg, 'agpk.json'), '{"id": "acme.plc" "version": "1"}');
    await expect(packPackage(pkg)).rejects.toThrow(/^agpk\.json is not valid JSON \(.*line 1 column 19/);
    await writeFile(join(pkg, 'agpk.json'), '[]');
    await expect(packPackage(pkg)).rejects.toThrow(/^agpk\.json is not a JSON object$/);
  });

  it('gives the same sha256 when the same tree is packed twice, whatever the mtimes', async () => {
    const a = await packPackage(pkg, { output: join(tmp.path, 'a.agpk') });
    await utimes(join(pkg, 'USAGE.md'), new Date('2001-02-03'), new Date('2001-02-03'));
    await chmod(join(pkg, 'USAGE.md'), 0o664);
    const b = await packPackage(pkg, { output: join(tmp.path, 'b.agpk') });
    expect(b.sha256).toBe(a.sha256);
    expect(await readFile(b.archive)).toEqual(await readFile(a.archive));
    await writeFile(join(pkg, 'payload', 'extra.txt'), 'more');
    const c = await packPackage(pkg, { output: join(tmp.path, 'c.agpk') });
    expect(c.sha256).not.toBe(a.sha256);
  });

  it('writes an archive the system tar lists with fixed owners, times and modes, and sha256sum agrees', async () => {
    const r = await packPackage(pkg);
    expect(r.archive).toBe(join(tmp.path, 'acme.hello-1.0.0.agpk'));
    const listing = execFileSync('tar', ['-tzvf', r.archive], {
      encoding: 'utf8',
      env: { ...process.env, TZ: 'UTC', LC_ALL: 'C' },
    })
      .trim()
      .split('\n');
    const names = listing.map((l) => l.split(/\s+/).at(-1)!);
    expect(names).toEqual([
      'DIGESTS',
      'INSTALL',
      'LICENSE',
      'UNINSTALL',
      'USAGE.md',
      'agent-commands.json',
      'agpk.json',
      'payload/',
      'payload/echo.mjs',
    ]);
    for (const line of listing) {
      expect(line).toMatch(/^(-rw-r--r--|-rwxr-xr-x|drwxr-xr-x) root\/root .* 1970-01-01 00:00 /);
    }
    expect(listing.find((l) => l.endsWith(' INSTALL'))).toMatch(/^-rwxr-xr-x/);
    expect(execFileSync('sha256sum', [r.archive], { encoding: 'utf8' }).split(' ')[0]).toBe(r.sha256);
    // DIGESTS is sha256sum format: every line but agpk.json's (canonical, signature-free) checks.
    const { digests } = parseDigests(await readFile(join(pkg, 'DIGESTS'), 'utf8'));
    const check = [...digests]
      .filter(([p]) => p !== 'agpk.json')
      .map(([p, s]) => `${s}  ${p}\n`)
      .join('');
    expect(execFileSync('sha256sum', ['-c', '--strict', '-'], { cwd: pkg, input: check, encoding: 'utf8' })).toMatch(
      /payload\/echo\.mjs: OK/,
    );
    const report = await validateTarget(r.archive, schemas);
    expect(report).toMatchObject({ ok: true, sha256: r.sha256, package_id: 'acme.hello' });
  });

  it('refuses to pack a tree holding a symbolic link', async () => {
    const { symlink } = await import('node:fs/promises');
    await symlink('/etc/passwd', join(pkg, 'payload', 'link'));
    await expect(packPackage(pkg)).rejects.toThrow(/payload\/link: only regular files and directories/);
  });
});

describe('agpk pack compression', () => {
  it('deflates text and stores random bytes, in one archive gzip and tar read back byte for byte', async () => {
    const { randomBytes } = await import('node:crypto');
    const random = randomBytes(3 * 1024 * 1024);
    const text = 'plaza agpk packs text well; '.repeat(120_000);
    await writeFile(join(pkg, 'random.bin'), random);
    await writeFile(join(pkg, 'notes.txt'), text);
    const first = await packPackage(pkg, { output: join(tmp.path, 'a.agpk') });
    // Random bytes cost their size (stored, not inflated by futile deflate); 3.4 MB of text almost nothing.
    expect(first.bytes).toBeGreaterThan(random.length);
    expect(first.bytes).toBeLessThan(random.length + 200_000);
    execFileSync('gzip', ['-t', first.archive]);
    const out = join(tmp.path, 'out');
    execFileSync('mkdir', [out]);
    execFileSync('tar', ['-xzf', first.archive, '-C', out]);
    expect((await readFile(join(out, 'random.bin'))).equals(random)).toBe(true);
    expect(await readFile(join(out, 'notes.txt'), 'utf8')).toBe(text);
    const second = await packPackage(pkg, { output: join(tmp.path, 'b.agpk') });
    expect(second.sha256).toBe(first.sha256);
  });
});
