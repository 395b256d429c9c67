/**
 * `plaza agpk pack` through the real command: it writes the archive either way, and exits 0 only
 * when that archive validates, naming what `validate` would refuse.
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { scaffoldPackage } from '../../src/agpk/index.ts';
import { tempDir } from '../support/agpk.ts';
import { runPlaza } from '../support/cli.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
});
afterAll(async () => {
  await tmp?.dispose();
});

describe('plaza agpk pack', () => {
  it('exits 0 with ok on a package that validates', async () => {
    const pkg = join(tmp.path, 'good');
    await scaffoldPackage(pkg, { id: 'acme.good', name: 'Good', version: '1.0.0' });
    const r = await runPlaza(['agpk', 'pack', pkg, '-o', join(tmp.path, 'good.agpk'), '--json'], {
      AGPK_HOME: join(tmp.path, 'home'),
    });
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { ok: boolean; problems: unknown[]; sha256: string };
    expect(json.ok).toBe(true);
    expect(json.problems).toEqual([]);
    expect(json.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('writes the archive of a package validate refuses, but exits 1 and names every problem', async () => {
    const pkg = join(tmp.path, 'bad');
    await scaffoldPackage(pkg, { id: 'acme.bad', name: 'Bad', version: '1.0.0' });
    const manifest = JSON.parse(await readFile(join(pkg, 'agpk.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(pkg, 'agpk.json'), JSON.stringify({ ...manifest, source_class: 'bogus' }, null, 2));
    await rm(join(pkg, 'USAGE.md'));
    const archive = join(tmp.path, 'bad.agpk');

    const json = await runPlaza(['agpk', 'pack', pkg, '-o', archive, '--json'], { AGPK_HOME: join(tmp.path, 'home') });
    expect(json.code).toBe(1);
    const body = JSON.parse(json.stdout) as {
      ok: boolean;
      archive: string;
      problems: { file: string; path: string; message: string }[];
    };
    expect(body.ok).toBe(false);
    expect(body.archive).toBe(archive);
    expect(existsSync(archive)).toBe(true);
    expect(body.problems.map((p) => `${p.file} ${p.path}`).sort()).toEqual([
      'USAGE.md or AGENT_CAPABILITIES.md $',
      'agpk.json $.source_class',
    ]);

    const text = await runPlaza(['agpk', 'pack', pkg, '-o', archive], { AGPK_HOME: join(tmp.path, 'home') });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('not publishable: 2 problem(s)');
    expect(text.stdout).toContain('$.source_class: must be one of');

    // validate says the same of the archive pack left.
    expect((await runPlaza(['agpk', 'validate', archive], { AGPK_HOME: join(tmp.path, 'home') })).code).toBe(1);
  });
});
