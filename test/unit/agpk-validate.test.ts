/**
 * AGPK validation (spec §2.8–2.9, §4.4): each publishing rule fails with its file, JSON path and a
 * precise message — command surface, usage file, manifest schema, DIGESTS, edge packages — and
 * Ed25519 signatures over DIGESTS verify, detect tampering and are reported when missing.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  checkSignature,
  generateSigningKey,
  loadAgpkSchemas,
  loadTrustedKeyIds,
  packPackage,
  scaffoldPackage,
  signTarget,
  validatePackageDir,
  validateTarget,
  writeDigests,
} from '../../src/agpk/index.ts';
import { tempDir } from '../support/agpk.ts';

const schemas = loadAgpkSchemas();
let tmp: Awaited<ReturnType<typeof tempDir>>;
let pkg: string;

async function editJson(file: string, edit: (value: Record<string, unknown>) => void): Promise<void> {
  const value = JSON.parse(await readFile(join(pkg, file), 'utf8')) as Record<string, unknown>;
  edit(value);
  await writeFile(join(pkg, file), JSON.stringify(value, null, 2));
}

async function problems(): Promise<Array<{ file: string; path: string; message: string }>> {
  await writeDigests(pkg);
  const report = await validatePackageDir(pkg, schemas);
  expect(report.ok).toBe(false);
  // The same package packed: its archive, read in one pass without extracting, says the same.
  const packed = await packPackage(pkg, { output: join(tmp.path, 'same.agpk') }).catch(() => undefined);
  if (packed) expect((await validateTarget(packed.archive, schemas)).problems).toEqual(report.problems);
  return report.problems;
}

beforeEach(async () => {
  tmp = await tempDir();
  pkg = join(tmp.path, 'pkg');
  await scaffoldPackage(pkg, { id: 'acme.plc', name: 'PLC', version: '1.0.0' });
});
afterEach(() => tmp.dispose());

describe('agpk validate', () => {
  it('rejects a package without its command surface', async () => {
    await rm(join(pkg, 'agent-commands.json'));
    expect(await problems()).toContainEqual({
      file: 'agent-commands.json',
      path: '$',
      message: 'missing command surface: agent-commands.json is mandatory',
    });
  });

  it('rejects an empty command list and a command without a driver entry', async () => {
    await editJson('agent-commands.json', (v) => (v.commands = []));
    expect(await problems()).toContainEqual({
      file: 'agent-commands.json',
      path: '$.commands',
      message: 'must NOT have fewer than 1 items',
    });
    await editJson(
      'agent-commands.json',
      (v) => (v.commands = [{ id: 'acme.plc.x', driver: { kind: 'node' }, input_schema: {} }]),
    );
    expect(await problems()).toContainEqual({
      file: 'agent-commands.json',
      path: '$.commands[0].driver',
      message: 'missing required property "entry"',
    });
  });

  it('rejects a command whose entry is not in the package', async () => {
    await editJson(
      'agent-commands.json',
      (v) => ((v.commands as Array<{ driver: { entry: string } }>)[0]!.driver.entry = 'payload/nope.mjs'),
    );
    expect(await problems()).toContainEqual({
      file: 'agent-commands.json',
      path: '$.commands[0].driver.entry',
      message: 'entry "payload/nope.mjs" is not a file in the package',
    });
  });

  it('rejects a package without a usage file', async () => {
    await rm(join(pkg, 'USAGE.md'));
    expect(await problems()).toContainEqual({
      file: 'USAGE.md or AGENT_CAPABILITIES.md',
      path: '$',
      message: 'missing usage file: USAGE.md or AGENT_CAPABILITIES.md is mandatory',
    });
  });

  it('accepts AGENT_CAPABILITIES.md instead of USAGE.md', async () => {
    await rm(join(pkg, 'USAGE.md'));
    await writeFile(join(pkg, 'AGENT_CAPABILITIES.md'), '# caps\n');
    await writeDigests(pkg);
    expect((await validatePackageDir(pkg, schemas)).ok).toBe(true);
  });

  it('reports manifest schema errors with their JSON path', async () => {
    await editJson('agpk.json', (v) => {
      v.agpk_version = '2.0';
      v.source_class = 'apt';
      delete v.name;
    });
    const found = await problems();
    expect(found).toContainEqual({ file: 'agpk.json', path: '$.agpk_version', message: 'must equal "1.0"' });
    expect(found).toContainEqual({
      file: 'agpk.json',
      path: '$.source_class',
      message: 'must be one of ["agent_package","preinstall"]',
    });
    expect(found).toContainEqual({ file: 'agpk.json', path: '$', message: 'missing required property "name"' });
  });

  it('keeps additional manifest properties allowed', async () => {
    await editJson('agpk.json', (v) => (v.x_vendor_extension = { anything: true }));
    await writeDigests(pkg);
    expect((await validatePackageDir(pkg, schemas)).ok).toBe(true);
  });

  it('warns about a field whose name is a near miss of one the standard defines (a typo would be ignored in silence)', async () => {
    await editJson('agpk.json', (v) => {
      v.lifecyle = v.lifecycle;
      delete v.lifecycle;
      v.Description = 'x';
      v.license = 'MIT';
      v.x = 1;
    });
    await editJson('agent-commands.json', (v) => {
      const [c] = v.commands as Array<Record<string, unknown>>;
      c!.timeout = 5000;
      c!.summry = 'x';
    });
    await writeDigests(pkg);
    const report = await validatePackageDir(pkg, schemas);
    expect(report.ok).toBe(true);
    const near = report.warnings.filter((w) => w.message.startsWith('unknown field'));
    expect(near).toEqual([
      {
        file: 'agent-commands.json',
        path: '$.commands[0].timeout',
        message: 'unknown field "timeout" is ignored: did you mean "timeout_ms"?',
      },
      {
        file: 'agent-commands.json',
        path: '$.commands[0].summry',
        message: 'unknown field "summry" is ignored: did you mean "summary"?',
      },
      {
        file: 'agpk.json',
        path: '$.lifecyle',
        message: 'unknown field "lifecyle" is ignored: did you mean "lifecycle"?',
      },
      {
        file: 'agpk.json',
        path: '$.Description',
        message: 'unknown field "Description" is ignored: did you mean "description"?',
      },
    ]);
    await editJson('agpk.json', (v) => (v.lifecycle = { instal: 'INSTALL', uninstall: 'UNINSTALL' }));
    await writeDigests(pkg);
    expect((await validatePackageDir(pkg, schemas)).warnings).toContainEqual({
      file: 'agpk.json',
      path: '$.lifecycle.instal',
      message: 'unknown field "instal" is ignored: did you mean "install"?',
    });
  });

  it('rejects bad DIGESTS: a changed file, a malformed line, an unlisted and a missing file', async () => {
    await writeFile(join(pkg, 'payload', 'echo.mjs'), 'changed');
    let report = await validatePackageDir(pkg, schemas);
    expect(report.problems.map((p) => p.message)).toContainEqual(
      expect.stringMatching(
        /^bad DIGESTS: sha256 mismatch for payload\/echo\.mjs \(DIGESTS [0-9a-f]{64}, file [0-9a-f]{64}\)$/,
      ),
    );
    await writeDigests(pkg);
    const digests = await readFile(join(pkg, 'DIGESTS'), 'utf8');
    await writeFile(
      join(pkg, 'DIGESTS'),
      `${digests}garbage\n0000000000000000000000000000000000000000000000000000000000000000  payload/gone.bin\n`,
    );
    await writeFile(join(pkg, 'payload', 'new.txt'), 'new');
    report = await validatePackageDir(pkg, schemas);
    const messages = report.problems.map((p) => p.message);
    expect(messages).toContain(`bad DIGESTS: line ${digests.split('\n').length}: expected "<64 hex sha256>  <path>"`);
    expect(messages).toContain('bad DIGESTS: payload/new.txt is not listed');
    expect(messages).toContain('bad DIGESTS: payload/gone.bin is listed but missing');
    await rm(join(pkg, 'DIGESTS'));
    expect((await validatePackageDir(pkg, schemas)).problems).toContainEqual({
      file: 'DIGESTS',
      path: '$',
      message: 'DIGESTS is missing (run `plaza agpk pack`)',
    });
  });

  describe('edge packages (capability_domain iot_edge)', () => {
    const edgeCommands = ['list', 'read', 'write', 'acl.get', 'acl.set'].map((n) => ({
      id: `acme.plc.${n}`,
      driver: { kind: 'node', entry: 'payload/echo.mjs' },
      input_schema: { type: 'object' },
    }));
    const face = {
      standard: 'agpk.device-face.v1',
      read: true,
      write: true,
      acl: true,
      subscribe: false,
      transports: ['modbus-tcp'],
    };

    it('accepts a complete device face with the minimum commands', async () => {
      await editJson('agpk.json', (v) => Object.assign(v, { capability_domain: 'iot_edge', device_face: face }));
      await editJson('agent-commands.json', (v) => (v.commands = edgeCommands));
      await writeDigests(pkg);
      expect((await validatePackageDir(pkg, schemas)).problems).toEqual([]);
    });

    it('rejects a probing-only package (no read/write) and missing minimum commands', async () => {
      await editJson('agpk.json', (v) =>
        Object.assign(v, { capability_domain: 'iot_edge', device_face: { ...face, read: false, write: false } }),
      );
      await editJson(
        'agent-commands.json',
        (v) => (v.commands = edgeCommands.filter((c) => !/\.(read|write)$/.test(c.id))),
      );
      const found = await problems();
      expect(found).toContainEqual({
        file: 'agpk.json',
        path: '$.device_face.read',
        message: 'edge package must declare read and write: probing-only packages are forbidden',
      });
      expect(found).toContainEqual({
        file: 'agent-commands.json',
        path: '$.commands',
        message: 'edge package is missing the required command "read"',
      });
      expect(found).toContainEqual({
        file: 'agent-commands.json',
        path: '$.commands',
        message: 'edge package is missing the required command "write"',
      });
    });

    it('rejects an edge package without device_face', async () => {
      await editJson('agpk.json', (v) => (v.capability_domain = 'iot_edge'));
      expect(await problems()).toContainEqual({
        file: 'agpk.json',
        path: '$.device_face',
        message: 'edge package (capability_domain iot_edge) must declare device_face "agpk.device-face.v1"',
      });
    });
  });

  describe('signatures', () => {
    it('signs DIGESTS with Ed25519, verifies, and detects a tampered file or signature', async () => {
      const keys = await generateSigningKey(join(tmp.path, 'publisher'));
      const { kid } = await signTarget(pkg, keys.privateKey);
      const signed = await validatePackageDir(pkg, schemas);
      expect(signed).toMatchObject({ ok: true, signed: true, signature_kid: kid });
      const manifest = JSON.parse(await readFile(join(pkg, 'agpk.json'), 'utf8')) as { ahcp: { signature: string } };
      expect(manifest.ahcp.signature).toMatch(/^[\w-]+\.\.[\w-]+$/);
      expect((await checkSignature(await readFile(join(pkg, 'DIGESTS')), manifest.ahcp.signature)).valid).toBe(true);

      await writeFile(join(pkg, 'payload', 'echo.mjs'), 'evil');
      await writeDigests(pkg); // an attacker can recompute DIGESTS but not the signature
      const tampered = await validatePackageDir(pkg, schemas);
      expect(tampered.problems).toContainEqual({
        file: 'agpk.json',
        path: '$.ahcp.signature',
        message: expect.stringMatching(/^bad signature: does not verify over DIGESTS/),
      });
    });

    it('signs an archive in place (repacked) so that the archive validates as signed', async () => {
      const keys = await generateSigningKey(join(tmp.path, 'k'));
      const { archive } = await packPackage(pkg);
      const before = (await validateTarget(archive, schemas)).sha256;
      const signed = await signTarget(archive, keys.privateKey);
      expect(signed.archive?.path).toBe(archive);
      expect(signed.archive?.sha256).not.toBe(before);
      expect(await validateTarget(archive, schemas)).toMatchObject({
        ok: true,
        signed: true,
        signature_kid: signed.kid,
        sha256: signed.archive?.sha256,
      });
    });

    it('says which key file keygen wrote when sign gets the public key or trust gets no key', async () => {
      const keys = await generateSigningKey(join(tmp.path, 'k'));
      await expect(signTarget(pkg, keys.publicKey)).rejects.toThrow(
        new RegExp(
          `^cannot use ${keys.publicKey.replaceAll('.', '\\.')} as an Ed25519 private key: .* \\(pass the <prefix>\\.key\\.pem that \`plaza agpk keygen <prefix>\` wrote\\)$`,
        ),
      );
      await expect(loadTrustedKeyIds([join(pkg, 'USAGE.md')])).rejects.toThrow(
        '(pass the <prefix>.pub.pem that `plaza agpk keygen <prefix>` wrote)',
      );
    });

    it('names the package and reports a stale signature when the manifest fails the schema', async () => {
      const keys = await generateSigningKey(join(tmp.path, 'publisher'));
      await signTarget(pkg, keys.privateKey);
      // Edited after signing, and DIGESTS written anew: the signature no longer verifies over it.
      await editJson('agpk.json', (v) => (v.source_class = 'bogus'));
      await writeFile(join(pkg, 'payload', 'echo.mjs'), 'changed');
      const found = await problems();
      expect(found).toContainEqual({
        file: 'agpk.json',
        path: '$.source_class',
        message: 'must be one of ["agent_package","preinstall"]',
      });
      expect(found).toContainEqual({
        file: 'agpk.json',
        path: '$.ahcp.signature',
        message: expect.stringMatching(/^bad signature: does not verify over DIGESTS/),
      });
      const report = await validatePackageDir(pkg, schemas);
      expect(report).toMatchObject({ package_id: 'acme.plc', version: '1.0.0', signed: true, signature_kid: null });
      const { archive } = await packPackage(pkg, { output: join(tmp.path, 'stale.agpk') });
      expect(await validateTarget(archive, schemas)).toMatchObject({ package_id: 'acme.plc', version: '1.0.0' });
    });

    it('reports no id or version that is not a string', async () => {
      await editJson('agpk.json', (v) => {
        v.id = 42;
        v.version = ['1'];
      });
      await writeDigests(pkg);
      expect(await validatePackageDir(pkg, schemas)).toMatchObject({ ok: false, package_id: null, version: null });
    });

    it('rejects ahcp.signed true without a signature', async () => {
      await editJson('agpk.json', (v) => (v.ahcp = { signed: true, signature: null }));
      expect(await problems()).toContainEqual({
        file: 'agpk.json',
        path: '$.ahcp.signature',
        message: 'ahcp.signed is true but ahcp.signature is missing',
      });
    });
  });
});
