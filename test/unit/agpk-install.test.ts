/**
 * The AGPK installer against a temp AGPK_HOME (archives from files; the market path is covered in
 * test/integration/agpk-publishing-flow.test.ts): human approval and the extra -y for unsigned
 * packages (§3.4), trusted and bad signatures, conflicts, depends order, rollback on a failing
 * INSTALL, remove refused while dependents remain, upgrade hooks, invoke per driver kind, and
 * invoke refusing a package whose installed files changed since install.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  type AgpkContext,
  type Approval,
  compareVersions,
  createRegistry,
  generateSigningKey,
  installPackages,
  invokeCommand,
  listCommands,
  loadAgpkSchemas,
  packPackage,
  removePackage,
  scaffoldPackage,
  signTarget,
  upgradePackage,
  verifyInstalled,
} from '../../src/agpk/index.ts';
import { tempDir } from '../support/agpk.ts';

const schemas = loadAgpkSchemas();
const OK: Approval = { approve: true, yes: true };
let tmp: Awaited<ReturnType<typeof tempDir>>;
let ctx: AgpkContext;

interface Spec {
  id: string;
  version?: string;
  depends?: string[];
  conflicts?: string[];
  install?: string;
  uninstall?: string;
  commands?: Array<{ id: string; kind: string; entry: string; body: string; timeout_ms?: number }>;
}

async function build(spec: Spec, sign?: string): Promise<string> {
  const version = spec.version ?? '1.0.0';
  const dir = join(tmp.path, 'src', `${spec.id}-${version}`);
  await scaffoldPackage(dir, { id: spec.id, name: spec.id, version });
  const manifest = JSON.parse(await readFile(join(dir, 'agpk.json'), 'utf8')) as Record<string, unknown>;
  Object.assign(manifest, { depends: spec.depends ?? [], conflicts: spec.conflicts ?? [] });
  await writeFile(join(dir, 'agpk.json'), JSON.stringify(manifest, null, 2));
  if (spec.install !== undefined) await writeFile(join(dir, 'INSTALL'), spec.install);
  if (spec.uninstall !== undefined) await writeFile(join(dir, 'UNINSTALL'), spec.uninstall);
  if (spec.commands) {
    for (const c of spec.commands) {
      await writeFile(join(dir, c.entry), c.body);
      if (c.kind === 'process') await chmod(join(dir, c.entry), 0o755);
    }
    const commands = spec.commands.map((c) => ({
      id: c.id,
      driver: { kind: c.kind, entry: c.entry },
      input_schema: { type: 'object' },
      ...(c.timeout_ms ? { timeout_ms: c.timeout_ms } : {}),
    }));
    await writeFile(join(dir, 'agent-commands.json'), JSON.stringify({ commands }, null, 2));
  }
  if (sign) await signTarget(dir, sign);
  return (await packPackage(dir)).archive;
}

beforeEach(async () => {
  tmp = await tempDir();
  ctx = {
    registry: createRegistry(join(tmp.path, 'home')),
    schemas,
    shareUrl: 'https://127.0.0.1:9',
    hostVersion: '0.1.0',
    baseEnv: { PATH: process.env.PATH },
  };
});
afterEach(() => tmp.dispose());

describe('agpk install', () => {
  it('refuses without approval when nobody can answer, and an unsigned package without -y', async () => {
    const archive = await build({ id: 'acme.a' });
    await expect(installPackages(ctx, [archive], {})).rejects.toThrow(
      'refused: install of acme.a@1.0.0 needs human approval (confirm on a terminal or pass --approve)',
    );
    await expect(installPackages(ctx, [archive], { approve: true })).rejects.toThrow(
      'refused: acme.a is not signed by a trusted key; a package without a trusted signature needs an explicit -y',
    );
    const asked: string[] = [];
    const no: Approval = { confirm: async (q) => (asked.push(q), false) };
    await expect(installPackages(ctx, [archive], no)).rejects.toThrow('install declined');
    expect(asked).toEqual(['install acme.a@1.0.0? [y/N] ']);
    expect((await ctx.registry.read()).packages).toEqual({});
    expect(await readdir(ctx.registry.packagesDir)).toEqual([]);
  });

  it('installs with approval, runs INSTALL with AGPK_INSTALL_ROOT and records the package', async () => {
    const archive = await build({ id: 'acme.a' });
    const shown: unknown[] = [];
    const r = await installPackages(ctx, [archive], { ...OK, show: (s) => shown.push(s) });
    expect(r.message).toBe('installed acme.a@1.0.0');
    expect(shown).toMatchObject([
      {
        action: 'install',
        packages: [{ package_id: 'acme.a', signed: false, trusted_signature: false, commands: ['acme.a.echo'] }],
      },
    ]);
    const rec = (await ctx.registry.read()).packages['acme.a']!;
    expect(rec.install_dir).toBe(join(ctx.registry.packagesDir, 'acme.a', '1.0.0'));
    expect(existsSync(join(rec.install_dir, 'var'))).toBe(true); // made by INSTALL
    expect(Object.keys(rec.files)).toContain('payload/echo.mjs');
    expect(await readdir(ctx.registry.home)).not.toContainEqual(expect.stringMatching(/tmp-/));
    await expect(installPackages(ctx, [archive], OK)).rejects.toThrow(
      'acme.a 1.0.0 is already installed; to install it afresh (say `plaza agpk verify` found it MODIFIED): `plaza agpk remove acme.a --approve`, then install again',
    );
  });

  it('names in the approval summary each hook the operation runs, with its first commands', async () => {
    const install = [
      '#!/bin/sh',
      '# Fetch the tool.',
      'set -eu',
      '',
      'mkdir -p "$AGPK_INSTALL_ROOT/var"',
      'echo "hidden\u001b[2K" > "$AGPK_INSTALL_ROOT/var/x"',
      `echo ${'x'.repeat(200)} > /dev/null`,
      'true',
      'true',
      '',
    ].join('\n');
    const shown: Array<Parameters<NonNullable<Approval['show']>>[0]> = [];
    const show = (s: (typeof shown)[number]) => shown.push(s);
    await installPackages(ctx, [await build({ id: 'acme.hooked', install })], { ...OK, show });
    expect(shown[0]!.packages[0]!.hooks).toEqual([
      {
        hook: 'install',
        file: 'INSTALL',
        commands: [
          'mkdir -p "$AGPK_INSTALL_ROOT/var"',
          'echo "hidden\\u{1b}[2K" > "$AGPK_INSTALL_ROOT/var/x"',
          `echo ${'x'.repeat(114)}…`,
        ],
        more: 2,
        truncated: false,
      },
    ]);

    // An upgrade without an UPGRADE hook runs INSTALL again; a package without hooks says none.
    const next = await build({
      id: 'acme.hooked',
      version: '1.1.0',
      install: '#!/bin/sh\ntouch "$AGPK_INSTALL_ROOT/up"\n',
    });
    await upgradePackage(ctx, 'acme.hooked', { ...OK, show }, next);
    expect(shown[1]!.packages[0]!.hooks).toEqual([
      { hook: 'upgrade', file: 'INSTALL', commands: ['touch "$AGPK_INSTALL_ROOT/up"'], more: 0, truncated: false },
    ]);
    await removePackage(ctx, 'acme.hooked', { approve: true, show });
    expect(shown[2]!.packages[0]!.hooks).toMatchObject([
      { hook: 'uninstall', file: 'UNINSTALL', commands: ['rm -rf "$AGPK_INSTALL_ROOT/var"'] },
    ]);

    const plainDir = join(tmp.path, 'src', 'plain');
    await scaffoldPackage(plainDir, { id: 'acme.plain', name: 'plain', version: '1.0.0' });
    await rm(join(plainDir, 'INSTALL'));
    await rm(join(plainDir, 'UNINSTALL'));
    const manifest = JSON.parse(await readFile(join(plainDir, 'agpk.json'), 'utf8')) as { lifecycle: object };
    manifest.lifecycle = { min_os: '0.1' };
    await writeFile(join(plainDir, 'agpk.json'), JSON.stringify(manifest));
    await installPackages(ctx, [(await packPackage(plainDir)).archive], { ...OK, show });
    expect(shown[3]!.packages[0]!.hooks).toEqual([]);
  });

  it('knows no package by the name of an Object.prototype member', async () => {
    // The registry's package map was a plain object: `toString` passed for installed.
    for (const id of ['toString', 'constructor', 'hasOwnProperty', '__proto__']) {
      await expect(removePackage(ctx, id, { approve: true })).rejects.toThrow(`${id} is not installed`);
      await expect(verifyInstalled(ctx.registry, id)).rejects.toThrow(`${id} is not installed`);
      await expect(listCommands(ctx.registry, id)).rejects.toThrow(`${id} is not installed`);
    }
  });

  it('needs no -y for a package signed by a trusted key; refuses a bad signature even with -y', async () => {
    const keys = await generateSigningKey(join(tmp.path, 'pub'));
    const signed = await build({ id: 'acme.s' }, keys.privateKey);
    await expect(installPackages(ctx, [signed], { approve: true })).rejects.toThrow(
      /acme.s is not signed by a trusted key/,
    );
    await installPackages({ ...ctx, trustedKeyFiles: [keys.publicKey] }, [signed], { approve: true });
    expect((await ctx.registry.read()).packages['acme.s']!.signature).toMatchObject({ signed: true, trusted: true });

    const dir = join(tmp.path, 'src', 'acme.t-1.0.0');
    await build({ id: 'acme.t' }, keys.privateKey);
    await writeFile(join(dir, 'payload', 'echo.mjs'), 'process.exit(0)');
    const tampered = (await packPackage(dir)).archive; // DIGESTS recomputed, signature now stale
    await expect(installPackages({ ...ctx, trustedKeyFiles: [keys.publicKey] }, [tampered], OK)).rejects.toThrow(
      /package acme.t is not valid: agpk.json \$.ahcp.signature: bad signature/,
    );
  });

  it('refuses conflicts in both directions', async () => {
    await installPackages(ctx, [await build({ id: 'acme.a' })], OK);
    await expect(installPackages(ctx, [await build({ id: 'acme.b', conflicts: ['acme.a'] })], OK)).rejects.toThrow(
      'package acme.b conflicts with installed package acme.a',
    );
    await installPackages(ctx, [await build({ id: 'acme.c', conflicts: ['acme.d'] })], OK);
    await expect(installPackages(ctx, [await build({ id: 'acme.d' })], OK)).rejects.toThrow(
      'installed package acme.c conflicts with acme.d',
    );
    expect(Object.keys((await ctx.registry.read()).packages).sort()).toEqual(['acme.a', 'acme.c']);
  });

  it('installs depends first and refuses to remove a package others depend on', async () => {
    const order: string[] = [];
    const log = join(tmp.path, 'order.log');
    const hook = `#!/bin/sh\necho "$AGPK_PACKAGE_ID" >> ${log}\n`;
    const app = await build({ id: 'acme.app', depends: ['acme.lib'], install: hook });
    const lib = await build({ id: 'acme.lib', install: hook });
    await installPackages(ctx, [app, lib], OK);
    order.push(...(await readFile(log, 'utf8')).trim().split('\n'));
    expect(order).toEqual(['acme.lib', 'acme.app']);
    await expect(removePackage(ctx, 'acme.lib', OK)).rejects.toThrow('acme.lib is needed by acme.app; remove it first');
    await expect(removePackage(ctx, 'acme.app', {})).rejects.toThrow(
      /refused: remove of acme.app@1.0.0 needs human approval/,
    );
    await removePackage(ctx, 'acme.app', { approve: true });
    await removePackage(ctx, 'acme.lib', { approve: true });
    expect((await ctx.registry.read()).packages).toEqual({});
  });

  it('looks a dependency up in the market only, never as a file that happens to exist here', async () => {
    const lib = await build({ id: 'acme.local-lib' });
    const app = await build({ id: 'acme.needs-file', depends: [lib] });
    await expect(installPackages(ctx, [app], OK)).rejects.toThrow();
    const installed = (await ctx.registry.read()).packages;
    expect(Object.keys(installed)).not.toContain('acme.local-lib');
    expect(Object.keys(installed)).not.toContain('acme.needs-file');
  });

  it('removes a package whose UNINSTALL fails only with force, saying so', async () => {
    const archive = await build({ id: 'acme.sticky', uninstall: '#!/bin/sh\nexit 1\n' });
    await installPackages(ctx, [archive], OK);
    await expect(removePackage(ctx, 'acme.sticky', { approve: true })).rejects.toThrow(
      /^UNINSTALL of acme\.sticky failed \(exit 1\).*; acme\.sticky stays installed \(`plaza agpk remove acme\.sticky --approve --force` removes it anyway\)$/s,
    );
    expect((await ctx.registry.read()).packages['acme.sticky']).toBeDefined();
    const forced = await removePackage(ctx, 'acme.sticky', { approve: true }, { force: true });
    expect(forced.message).toMatch(/^removed acme\.sticky 1\.0\.0 \(forced: its UNINSTALL failed: /);
    expect((await ctx.registry.read()).packages['acme.sticky']).toBeUndefined();
  });

  it('rolls back the whole plan when an INSTALL fails', async () => {
    const lib = await build({ id: 'acme.lib' });
    const app = await build({ id: 'acme.app', depends: ['acme.lib'], install: '#!/bin/sh\necho boom >&2\nexit 3\n' });
    await expect(installPackages(ctx, [app, lib], OK)).rejects.toThrow('INSTALL of acme.app failed (exit 3): boom');
    expect((await ctx.registry.read()).packages).toEqual({});
    expect(await readdir(ctx.registry.packagesDir)).toEqual([]);
    expect(await readdir(ctx.registry.tmpDir)).toEqual([]);
  });

  it('refuses, and rolls back, an install whose hook changed a file the package ships (invoke would never run it)', async () => {
    const commands = [{ id: 'acme.hooked.run', kind: 'node', entry: 'payload/run.mjs', body: 'console.log("{}")' }];
    const patching = await build({
      id: 'acme.hooked',
      commands,
      install: '#!/bin/sh\necho "// patched" >> "$AGPK_INSTALL_ROOT/payload/run.mjs"\n',
    });
    await expect(installPackages(ctx, [patching], OK)).rejects.toThrow(
      /install hook of acme\.hooked changed files the package ships \(payload\/run\.mjs\)/,
    );
    expect((await ctx.registry.read()).packages).toEqual({});
    expect(await readdir(ctx.registry.packagesDir)).toEqual([]);
    // A hook that adds files beside the package's own is fine, and its commands run.
    const adding = await build({
      id: 'acme.hooked',
      version: '1.0.1',
      commands,
      install: '#!/bin/sh\necho made > "$AGPK_INSTALL_ROOT/payload/state.txt"\n',
    });
    await installPackages(ctx, [adding], OK);
    expect((await invokeCommand(ctx, 'acme.hooked.run', {})).ok).toBe(true);
  });

  it('serialises concurrent operations on one registry through its lock', async () => {
    const [a, b] = await Promise.all([build({ id: 'acme.a' }), build({ id: 'acme.b' })]);
    await Promise.all([installPackages(ctx, [a], OK), installPackages(ctx, [b], OK)]);
    expect(Object.keys((await ctx.registry.read()).packages).sort()).toEqual(['acme.a', 'acme.b']);
    expect(existsSync(join(ctx.registry.home, 'registry.lock'))).toBe(false);
  });

  it('replaces a folder left over by a crash before the registry was written', async () => {
    const archive = await build({ id: 'acme.a' });
    await mkdir(join(ctx.registry.packagesDir, 'acme.a', '1.0.0', 'payload'), { recursive: true });
    await writeFile(join(ctx.registry.packagesDir, 'acme.a', '1.0.0', 'payload', 'half'), 'x');
    await installPackages(ctx, [archive], OK);
    expect(existsSync(join(ctx.registry.packagesDir, 'acme.a', '1.0.0', 'payload', 'half'))).toBe(false);
    expect((await verifyInstalled(ctx.registry, 'acme.a'))[0]!.ok).toBe(true);
  });

  it('upgrades with the upgrade hook seeing the previous version, and removes the old folder', async () => {
    const hook = '#!/bin/sh\necho "${AGPK_PREVIOUS_VERSION:-none}" > "$AGPK_INSTALL_ROOT/prev"\n';
    await installPackages(ctx, [await build({ id: 'acme.a', install: hook })], OK);
    const next = await build({ id: 'acme.a', version: '1.1.0', install: hook });
    await expect(upgradePackage(ctx, 'acme.a', {}, next)).rejects.toThrow(/needs human approval/);
    const r = await upgradePackage(ctx, 'acme.a', OK, next);
    expect(r.message).toBe('upgraded acme.a 1.0.0 -> 1.1.0');
    const rec = (await ctx.registry.read()).packages['acme.a']!;
    expect(rec.version).toBe('1.1.0');
    expect(await readFile(join(rec.install_dir, 'prev'), 'utf8')).toBe('1.0.0\n');
    expect(existsSync(join(ctx.registry.packagesDir, 'acme.a', '1.0.0'))).toBe(false);
    expect((await upgradePackage(ctx, 'acme.a', OK, next)).changed).toBe(false);
  });
});

describe('agpk versions', () => {
  it('orders a pre-release before its release, as semantic versioning does, and keeps numeric order', () => {
    // 2.0.0-rc.1 sorted above 2.0.0: the release was "older", refused as an upgrade and discarded by the source worker.
    const order = [
      '0.9',
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.0+build.1',
      '1.0.1',
      '1.2.0',
      '1.10.0',
      '2.0.0-rc.1',
      '2.0.0',
    ];
    expect([...order].reverse().sort(compareVersions)).toEqual(order);
    expect(compareVersions('2024-01-05', '2024-02-01')).toBe(-1);
    expect(compareVersions('latest', 'latest')).toBe(0);
  });

  it.each([
    // SemVer compares alphanumeric pre-release identifiers in ASCII order: upper case first.
    ['1.0.0-Beta', '1.0.0-alpha'],
    ['1.0.0-RC.1', '1.0.0-beta'],
    ['1.0.0-alpha.Z', '1.0.0-alpha.a'],
    ['1.0.0-beta.9', '1.0.0-beta.10'],
    ['1.0.0-rc.1', '1.0.0'],
    ['1.0.0', '1.0.0+build.1'],
    // Not SemVer: the fallback, numbers numerically, text by code units as well.
    ['0.9', '0.10'],
    ['1.2.3.4', '1.2.3.10'],
    ['1.0-Beta', '1.0-alpha'],
    ['0.9', '1.0.0-alpha'],
    ['v1.9', 'v1.10'],
    ['Latest', 'latest'],
  ])('orders %s before %s', (lower, higher) => {
    expect(compareVersions(lower, higher)).toBe(-1);
    expect(compareVersions(higher, lower)).toBe(1);
  });

  it('upgrades a release candidate to its release', async () => {
    await installPackages(ctx, [await build({ id: 'acme.rc', version: '2.0.0-rc.1' })], OK);
    const r = await upgradePackage(ctx, 'acme.rc', OK, await build({ id: 'acme.rc', version: '2.0.0' }));
    expect(r.message).toBe('upgraded acme.rc 2.0.0-rc.1 -> 2.0.0');
  });
});

describe('agpk invoke', () => {
  beforeEach(async () => {
    const archive = await build({
      id: 'acme.tools',
      commands: [
        {
          id: 'acme.tools.node',
          kind: 'node',
          entry: 'payload/n.mjs',
          body: 'let s="";for await (const c of process.stdin) s+=c;console.log(JSON.stringify({got: JSON.parse(s), root: process.env.AGPK_INSTALL_ROOT}))',
        },
        { id: 'acme.tools.script', kind: 'script', entry: 'payload/s.sh', body: 'echo "{\\"args\\": $AGPK_ARGS}"\n' },
        {
          id: 'acme.tools.process',
          kind: 'process',
          entry: 'payload/p',
          body: '#!/bin/sh\necho not json; echo oops >&2; exit 4\n',
        },
        {
          id: 'acme.tools.slow',
          kind: 'node',
          entry: 'payload/slow.mjs',
          body: 'setTimeout(() => {}, 60000)',
          timeout_ms: 300,
        },
      ],
    });
    await installPackages(ctx, [archive], OK);
  });

  it('lists commands from the registry and runs each driver kind', async () => {
    expect((await listCommands(ctx.registry, 'acme.tools')).map((c) => c.id)).toEqual([
      'acme.tools.node',
      'acme.tools.process',
      'acme.tools.script',
      'acme.tools.slow',
    ]);
    const root = join(ctx.registry.packagesDir, 'acme.tools', '1.0.0');
    expect(await invokeCommand(ctx, 'acme.tools.node', { a: 1 })).toMatchObject({
      ok: true,
      exit_code: 0,
      output: { got: { a: 1 }, root },
    });
    expect(await invokeCommand(ctx, 'acme.tools.script', { b: [2] })).toMatchObject({
      ok: true,
      output: { args: { b: [2] } },
    });
    expect(await invokeCommand(ctx, 'acme.tools.process', {})).toMatchObject({
      ok: false,
      exit_code: 4,
      output: 'not json\n',
      stderr: 'oops\n',
    });
    expect(await invokeCommand(ctx, 'acme.tools.slow', {})).toMatchObject({ ok: false, timed_out: true });
  });

  it('refuses to run a command whose installed files were changed after install, naming the file', async () => {
    const root = join(ctx.registry.packagesDir, 'acme.tools', '1.0.0');
    const entry = join(root, 'payload', 'n.mjs');
    await writeFile(entry, 'console.log(JSON.stringify({ injected: true }))');
    expect((await verifyInstalled(ctx.registry, 'acme.tools'))[0]!.changed).toEqual(['payload/n.mjs']);
    await expect(invokeCommand(ctx, 'acme.tools.node', {})).rejects.toThrow(
      /refused: acme\.tools 1\.0\.0 was changed after install \(changed payload\/n\.mjs\)/,
    );
  });

  it('refuses a command when another payload file changed, even with its size and mtime kept', async () => {
    // n.mjs could import s.sh's neighbours; an edit that keeps size and mtime (touch -r) moves ctime.
    const root = join(ctx.registry.packagesDir, 'acme.tools', '1.0.0');
    const other = join(root, 'payload', 's.sh');
    const before = await stat(other);
    const body = await readFile(other, 'utf8');
    await writeFile(other, body.replace('args', 'ARGS'));
    await utimes(other, before.atime, before.mtime);
    await expect(invokeCommand(ctx, 'acme.tools.node', {})).rejects.toThrow(
      'refused: acme.tools 1.0.0 was changed after install (changed payload/s.sh)',
    );
    await rm(other);
    await expect(invokeCommand(ctx, 'acme.tools.node', {})).rejects.toThrow(
      'refused: acme.tools 1.0.0 was changed after install (missing payload/s.sh)',
    );
  });

  it('still runs when a file was only touched or chmod-ed, and after the package made its own files', async () => {
    const root = join(ctx.registry.packagesDir, 'acme.tools', '1.0.0');
    await utimes(join(root, 'payload', 'n.mjs'), new Date(), new Date(2000, 1, 1));
    await chmod(join(root, 'payload', 's.sh'), 0o755);
    await writeFile(join(root, 'var', 'state.json'), '{}');
    expect(await invokeCommand(ctx, 'acme.tools.node', { a: 1 })).toMatchObject({
      ok: true,
      output: { got: { a: 1 } },
    });
  });

  it('checks args against the input schema and refuses unknown commands', async () => {
    await expect(invokeCommand(ctx, 'acme.tools.nope', {})).rejects.toThrow(
      'unknown command id "acme.tools.nope" (see `plaza agpk list-commands`)',
    );
    await expect(invokeCommand(ctx, 'acme.tools.node', [1])).rejects.toThrow('--args must be a JSON object');
  });
});
