/**
 * Pins the SSRF guard (probes/ssrf.ts, probes/guarded-fetch.ts): which addresses are refused,
 * that private targets pass only when allowed (metadata never), that names are checked after
 * resolution (without the address in the error), that every redirect hop is checked again, and that body size is capped.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { classifyAddress, createGuardedFetch, SsrfError } from '../../probes/index.ts';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['0.0.0.0', 'reserved'],
    ['::1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fe80::1', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    // IPv4 carried to an IPv4 host: -translated, NAT64 (a NAT64 gateway forwards into the IPv4
    // network behind it), 6to4; the local-use NAT64 prefix, site-local, Teredo.
    ['::ffff:0:7f00:1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::10.0.0.5', 'private'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:a00:1::1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['64:ff9b:1::a00:1', 'private'],
    ['fec0::1', 'private'],
    ['2001:0:4136:e378::1', 'reserved'],
    ['::2', 'reserved'],
    ['not-an-ip', 'reserved'],
  ])('classifies %s as %s', (address, reason) => {
    expect(classifyAddress(address)).toBe(reason);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
    '2001:4860:4860::8888',
  ])('lets the public address %s through', (address) => {
    expect(classifyAddress(address)).toBeUndefined();
  });
});

describe('createGuardedFetch', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/redirect') {
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      } else if (url.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(4096));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const refused = async (guard: ReturnType<typeof createGuardedFetch>, url: string) => {
    try {
      await guard.fetch(url);
    } catch (error) {
      return error;
    }
    throw new Error(`expected ${url} to be refused`);
  };

  it.each([
    ['http://127.0.0.1:4/', 'loopback'],
    ['http://10.0.0.1/', 'private'],
    ['http://169.254.169.254/latest/meta-data/', 'metadata'],
    ['http://[::1]:4/', 'loopback'],
    ['http://[::ffff:127.0.0.1]:4/', 'loopback'],
    ['http://localhost:4/', 'loopback'],
  ])('refuses %s when private targets are not allowed', async (url, reason) => {
    const guard = createGuardedFetch({ allowPrivate: false });
    const error = await refused(guard, url);
    expect(error).toBeInstanceOf(SsrfError);
    expect((error as SsrfError).reason).toBe(reason);
    await guard.close();
  });

  it('refuses a name whose resolution includes a loopback address (checked at connect time)', async () => {
    const guard = createGuardedFetch({ allowPrivate: false, resolve: async () => ['93.184.216.34', '127.0.0.1'] });
    const error = await refused(guard, 'http://rebind.example.test/');
    expect(error).toBeInstanceOf(SsrfError);
    // The public error names the host, never the address it resolved to (that would map internal names).
    expect((error as Error).message).toMatch(
      /^Refused to connect to rebind\.example\.test: it resolves to a loopback address\./,
    );
    expect((error as Error).message).not.toContain('127.0.0.1');
    expect((error as SsrfError).address).toBe('127.0.0.1');
    await guard.close();
  });

  it('refuses schemes other than http and https', async () => {
    const guard = createGuardedFetch({ allowPrivate: true });
    expect(((await refused(guard, 'file:///etc/passwd')) as SsrfError).reason).toBe('scheme');
    await guard.close();
  });

  it('checks every redirect hop: a redirect to a private address is refused', async () => {
    // Only the test server's own address is allowed, as an operator allow-list would.
    const guard = createGuardedFetch({ allowPrivate: false, allowAddresses: ['127.0.0.1'] });
    expect((await guard.fetch(`${base}/ok`)).status).toBe(200);
    const toPrivate = await refused(guard, `${base}/redirect?to=${encodeURIComponent('http://10.0.0.1/x')}`);
    expect((toPrivate as SsrfError).reason).toBe('private');
    const toMetadata = await refused(guard, `${base}/redirect?to=${encodeURIComponent('http://169.254.169.254/')}`);
    expect((toMetadata as SsrfError).reason).toBe('metadata');
    await guard.close();
  });

  it('never reaches cloud metadata, even with private targets allowed', async () => {
    const guard = createGuardedFetch({ allowPrivate: true });
    expect(
      ((await refused(guard, `${base}/redirect?to=${encodeURIComponent('http://169.254.169.254/')}`)) as SsrfError)
        .reason,
    ).toBe('metadata');
    await guard.close();
  });

  it('bounds the number of redirects', async () => {
    const guard = createGuardedFetch({ allowPrivate: true, maxRedirects: 2 });
    const loop = `${base}/redirect?to=${encodeURIComponent(`${base}/redirect?to=${encodeURIComponent(`${base}/redirect?to=/ok`)}`)}`;
    expect(((await refused(guard, loop)) as SsrfError).reason).toBe('redirects');
    await guard.close();
  });

  it('caps the response body size', async () => {
    const guard = createGuardedFetch({ allowPrivate: true, maxResponseBytes: 1024 });
    const res = await guard.fetch(`${base}/big`);
    await expect(res.text()).rejects.toThrow(/larger than 1024 bytes/);
    expect(await (await guard.fetch(`${base}/ok`)).json()).toEqual({ ok: true });
    await guard.close();
  });
});
