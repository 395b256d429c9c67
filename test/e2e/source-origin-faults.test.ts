/**
 * Package origin faults against a real `plaza serve` and its background source worker: an HTTPS
 * origin (test CA) that redirects in a loop, streams an endless body, serves other bytes than the
 * registered sha256, or changes the bytes after the source went healthy. Each source ends in a
 * non-healthy state with a reason, within bounded time, and an endless body is cut near the size limit.
 * An archive holding a name no file system can hold is discarded with a finding, and the server
 * (which it used to end, issue 31) keeps answering, with no inspection folder left in its TMPDIR.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestTls, rawArchive } from '../support/agpk.ts';
import { type ServerProcess, startPlazaServer } from '../support/cli.ts';
import { buildPackage } from '../support/sources.ts';

const MAX_BYTES = 1024 * 1024;

describe('package origin faults', () => {
  let plaza: ServerProcess;
  let origin: { url: string; close(): Promise<void> };
  const good: { sha256: string; bytes: Buffer } = { sha256: '', bytes: Buffer.alloc(0) };
  const other: { sha256: string; bytes: Buffer } = { sha256: '', bytes: Buffer.alloc(0) };
  let driftServesOther = false;
  let endlessSent = 0;
  const longName = rawArchive([
    { path: 'agpk.json', type: '0', mode: 0o644, content: '{}' },
    { path: 'long', type: '0', mode: 0o644, content: 'x', pax: { path: 'n'.repeat(300) } },
  ]);
  let tmp = '';

  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'plaza-origin-faults-'));
    const a = await buildPackage(root, { id: 'com.example.origin', version: '1.0.0' });
    const b = await buildPackage(root, {
      id: 'com.example.origin',
      version: '1.0.0',
      files: { 'USAGE.md': '# Changed\n' },
    });
    Object.assign(good, { sha256: a.sha256, bytes: readFileSync(a.path) });
    Object.assign(other, { sha256: b.sha256, bytes: readFileSync(b.path) });
    const tls = await createTestTls();
    const caFile = join(root, 'ca.pem');
    writeFileSync(caFile, tls.caCert);
    const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      switch (req.url) {
        case '/loop.agpk':
          return res.writeHead(302, { location: '/loop.agpk' }).end();
        case '/endless.agpk': {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          const block = Buffer.alloc(64 * 1024, 7);
          const pump = () => {
            while (!res.destroyed && endlessSent < 512 * MAX_BYTES) {
              endlessSent += block.length;
              if (!res.write(block)) return void res.once('drain', pump);
            }
          };
          res.on('error', () => undefined);
          return pump();
        }
        case '/long-name.agpk':
          return res.writeHead(200, { 'content-length': String(longName.length) }).end(longName);
        case '/mismatch.agpk':
          return res.writeHead(200, { 'content-length': String(other.bytes.length) }).end(other.bytes);
        case '/drift.agpk': {
          const body = driftServesOther ? other.bytes : good.bytes;
          return res.writeHead(200, { 'content-length': String(body.length) }).end(body);
        }
        default:
          return res.writeHead(404).end();
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = {
      url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
    };
    tmp = mkdtempSync(join(tmpdir(), 'plaza-origin-tmp-'));
    plaza = await startPlazaServer({
      TMPDIR: tmp,
      PLAZA_DATA_DIR: mkdtempSync(join(tmpdir(), 'plaza-origin-data-')),
      PLAZA_ALLOW_PRIVATE_TARGETS: '1',
      PLAZA_SOURCES_MAX_BYTES: String(MAX_BYTES),
      PLAZA_SOURCES_RECHECK_S: '1',
      NODE_EXTRA_CA_CERTS: caFile,
    });
  }, 60_000);
  afterAll(async () => {
    plaza?.child.kill('SIGKILL');
    await origin?.close();
  });

  async function register(packageId: string, path: string, sha256: string): Promise<string> {
    const res = await fetch(`${plaza.url}/api/agpk/sources`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        package_id: packageId,
        name: packageId,
        version: '1.0.0',
        summary: 'Origin fault test.',
        vendor_name: 'Example Inc',
        download_uri: `${origin.url}${path}`,
        sha256,
      }),
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as any).source.id as string;
  }

  async function waitFor(id: string, statuses: string[], timeoutMs: number): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    let source: any;
    while (Date.now() < deadline) {
      source = ((await (await fetch(`${plaza.url}/api/agpk/sources/${id}`)).json()) as any).source;
      if (statuses.includes(source.status)) return source;
      await new Promise((r) => setTimeout(r, 200));
    }
    return source;
  }

  it('gives up on a redirect loop, an endless body and a hash mismatch, with reasons, reading the endless body only to near the limit', async () => {
    const loop = await register('com.example.loop', '/loop.agpk', good.sha256);
    const endless = await register('com.example.endless', '/endless.agpk', good.sha256);
    const mismatch = await register('com.example.mismatch', '/mismatch.agpk', good.sha256);
    const settled = await Promise.all(
      [loop, endless, mismatch].map((id) => waitFor(id, ['discarded', 'rejected', 'dropped'], 30_000)),
    );
    for (const source of settled) {
      expect(source.status, JSON.stringify(source)).toBe('discarded');
      expect(source.live).toBe(false);
      expect(source.reason).toEqual(expect.any(String));
    }
    expect(settled[0].reason).toMatch(/redirect/i);
    expect(settled[1].reason).toMatch(/byte|large|size|limit/i);
    expect(settled[2].reason).toMatch(/sha-?256|hash|digest/i);
    // The endless body was cut near the limit, not read to the end: the origin could write no more
    // than the worker read and the sockets buffer, so this bounds what the download held. (The
    // process's RSS is no measure of it: an embedded database settling after start grew it by
    // 355-500 MB in these seconds on a loaded machine, at this commit and before, with 5 MB sent.)
    expect(endlessSent).toBeLessThan(64 * MAX_BYTES);
    const listed = (await (await fetch(`${plaza.url}/share/v1/agpk/sources`)).json()) as any;
    expect(JSON.stringify(listed)).not.toMatch(/com\.example\.(loop|endless|mismatch)/);
  }, 60_000);

  it('discards a healthy source whose bytes change between one check and the next', async () => {
    const id = await register('com.example.origin', '/drift.agpk', good.sha256);
    const healthy = await waitFor(id, ['healthy', 'discarded', 'rejected'], 30_000);
    expect(healthy.status, JSON.stringify(healthy)).toBe('healthy');
    driftServesOther = true;
    const drifted = await waitFor(id, ['discarded', 'dropped', 'rejected'], 30_000);
    expect(drifted.status, JSON.stringify(drifted)).toBe('discarded');
    expect(drifted.reason).toMatch(/drift/i);
    const listed = (await (await fetch(`${plaza.url}/share/v1/agpk/sources`)).json()) as any;
    expect(JSON.stringify(listed)).not.toContain('com.example.origin');
  }, 60_000);

  it('discards an archive with a 300-byte name with a finding, and goes on serving', async () => {
    const id = await register(
      'com.example.longname',
      '/long-name.agpk',
      createHash('sha256').update(longName).digest('hex'),
    );
    const source = await waitFor(id, ['discarded', 'rejected', 'healthy'], 30_000);
    expect(source.status, JSON.stringify(source)).toBe('discarded');
    expect(source.findings).toContainEqual(
      expect.objectContaining({
        id: 'archive.unsafe',
        severity: 'high',
        message: expect.stringMatching(/has a name of 300 bytes/),
      }),
    );
    expect(plaza.child.exitCode).toBeNull();
    expect((await fetch(`${plaza.url}/health`)).status).toBe(200);
    expect(
      readdirSync(tmp).filter((name) => name.startsWith('plaza-inspect-') || name.startsWith('plaza-source-')),
    ).toEqual([]);
  }, 60_000);
});
