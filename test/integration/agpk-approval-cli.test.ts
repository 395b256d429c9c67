/**
 * `plaza agpk install … --approve -y` prints, in its approval summary on stderr, the lifecycle
 * hook it is about to run and the hook's first commands (spec §3.4: an informed approval).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { packPackage, scaffoldPackage } from '../../src/agpk/index.ts';
import { tempDir } from '../support/agpk.ts';
import { runPlaza } from '../support/cli.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
});
afterAll(async () => {
  await tmp?.dispose();
});

describe('plaza agpk install, approval summary', () => {
  it('names the hook that will run and shows its first commands', async () => {
    const pkg = join(tmp.path, 'pkg');
    await scaffoldPackage(pkg, { id: 'acme.hooked', name: 'Hooked', version: '1.0.0' });
    await writeFile(
      join(pkg, 'INSTALL'),
      '#!/bin/sh\nset -eu\nmkdir -p "$AGPK_INSTALL_ROOT/var"\necho one\necho two\necho three\n',
    );
    const { archive } = await packPackage(pkg);
    const r = await runPlaza(['agpk', 'install', archive, '--approve', '-y'], { AGPK_HOME: join(tmp.path, 'home') });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      [
        '    commands acme.hooked.echo',
        '    runs hook install: INSTALL',
        '        mkdir -p "$AGPK_INSTALL_ROOT/var"',
        '        echo one',
        '        echo two',
        '        … 1 more line(s) in INSTALL',
        '',
      ].join('\n'),
    );
  });

  it("escapes the publisher's text, so an escape sequence in a name cannot rewrite the summary", async () => {
    const pkg = join(tmp.path, 'sneaky');
    // ESC[1A ESC[2K: up a line and erase it, which would hide the line before on a terminal.
    await scaffoldPackage(pkg, { id: 'acme.sneaky', name: 'Sneaky\u001b[1A\u001b[2K', version: '1.0.0' });
    const { archive } = await packPackage(pkg);
    const r = await runPlaza(['agpk', 'install', archive, '--approve', '-y'], { AGPK_HOME: join(tmp.path, 'home2') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('(Sneaky\\u{1b}[1A\\u{1b}[2K');
    expect(r.stderr).not.toContain('\u001b');
  });
});
