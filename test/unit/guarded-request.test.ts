/**
 * Pins the SSRF guard of the prober's light requests (probes/guarded-request.ts) to the same
 * rules as the guarded fetch: refused ranges and schemes, names checked at connect time, every
 * redirect hop checked and their number bounded, the body size capped, the whole request timed;
 * every request sent (each hop) passes the caller's `beforeSend` first (the per-host probe bound).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createGuardedRequest } from '../../probes/guarded-request.ts';
import { SsrfError } from '../../probes/index.ts';

describe('createGuardedRequest', () => {
  let server: Server;
  let base: string;
  /** The paths the server was asked for. */
  const served: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      served.push(url.pathname);
      if (url.pathname === '/redirect') res.writeHead(307, { location: url.searchParams.get('to') ?? '/' }).end();
      else if (url.pathname === '/big') res.writeHead(200).end('x'.repeat(4096));
      else if (url.pathname === '/slow') setTimeout(() => res.writeHead(200).end('late'), 2_000);
      else if (url.pathname === '/echo')
        req.pipe(res.writeHead(200, { 'x-method': req.method!, 'set-cookie': ['a=1', 'b=2'] }));
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const text = (guard: ReturnType<typeof createGuardedRequest>, url: string, init = {}) =>
    guard.request(url, init, (res) => res.text());
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SsrfError);
    return error as SsrfError;
  };

  it.each([
    ['http://127.0.0.1:4/', 'loopback'],
    ['http://10.0.0.1/', 'private'],
    ['http://169.254.169.254/latest/meta-data/', 'metadata'],
    ['http://[::ffff:127.0.0.1]:4/', 'loopback'],
    ['http://localhost:4/', 'loopback'],
  ])('refuses %s when private targets are not allowed', async (url, reason) => {
    const guard = createGuardedRequest({ allowPrivate: false });
    expect((await refusal(text(guard, url))).reason).toBe(reason);
    await guard.close();
  });

  it('refuses a name whose resolution includes a private address (checked at connect time)', async () => {
    const guard = createGuardedRequest({ allowPrivate: false, resolve: async () => ['93.184.216.34', '127.0.0.1'] });
    const error = await refusal(text(guard, 'http://rebind.example.test/'));
    // The name, not the address it resolves to (that would map internal names for anyone); the address is kept for the log.
    expect(error.message).toContain('rebind.example.test');
    expect(error.message).not.toContain('127.0.0.1');
    expect(error.address).toBe('127.0.0.1');
    await guard.close();
  });

  it('refuses schemes other than http and https', async () => {
    const guard = createGuardedRequest({ allowPrivate: true });
    expect((await refusal(text(guard, 'file:///etc/passwd'))).reason).toBe('scheme');
    await guard.close();
  });

  it('sends method, headers and body, and reads headers and body back', async () => {
    const guard = createGuardedRequest({ allowPrivate: true });
    const answer = await guard.request(
      `${base}/echo`,
      { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'ünïcode' },
      async (res) => ({
        status: res.status,
        method: res.header('x-method'),
        cookies: res.header('set-cookie'),
        body: await res.text(),
      }),
    );
    expect(answer).toEqual({ status: 200, method: 'POST', cookies: 'a=1, b=2', body: 'ünïcode' });
    await guard.close();
  });

  it('checks every redirect hop and follows the allowed ones', async () => {
    const guard = createGuardedRequest({ allowPrivate: false, allowAddresses: ['127.0.0.1'] });
    expect(await text(guard, `${base}/redirect?to=${encodeURIComponent('/ok')}`)).toBe('{"ok":true}');
    expect((await refusal(text(guard, `${base}/redirect?to=${encodeURIComponent('http://10.0.0.1/x')}`))).reason).toBe(
      'private',
    );
    expect(
      (await refusal(text(guard, `${base}/redirect?to=${encodeURIComponent('http://169.254.169.254/')}`))).reason,
    ).toBe('metadata');
    await guard.close();
  });

  it('asks beforeSend before every request it sends, redirect hops included, and sends none it refuses', async () => {
    const guard = createGuardedRequest({ allowPrivate: true });
    const asked: string[] = [];
    const beforeSend = async (url: URL) => {
      asked.push(url.pathname);
      if (url.pathname === '/refused') throw new Error('over budget');
    };
    expect(
      await guard.request(`${base}/redirect?to=${encodeURIComponent('/ok')}`, { beforeSend }, (res) => res.text()),
    ).toBe('{"ok":true}');
    expect(asked).toEqual(['/redirect', '/ok']);
    const refused = guard.request(`${base}/redirect?to=${encodeURIComponent('/refused')}`, { beforeSend }, (res) =>
      res.text(),
    );
    await expect(refused).rejects.toThrow('over budget');
    expect(asked).toEqual(['/redirect', '/ok', '/redirect', '/refused']);
    expect(served).not.toContain('/refused');
    await guard.close();
  });

  it('bounds the number of redirects', async () => {
    const guard = createGuardedRequest({ allowPrivate: true, maxRedirects: 2 });
    const loop = `${base}/redirect?to=${encodeURIComponent(`${base}/redirect?to=${encodeURIComponent(`${base}/redirect?to=/ok`)}`)}`;
    expect((await refusal(text(guard, loop))).reason).toBe('redirects');
    await guard.close();
  });

  it('caps the body size, read whole or in chunks', async () => {
    const guard = createGuardedRequest({ allowPrivate: true, maxResponseBytes: 1024 });
    await expect(text(guard, `${base}/big`)).rejects.toThrow(/larger than 1024 bytes/);
    const chunked = guard.request(`${base}/big`, {}, async (res) => {
      for await (const chunk of res.chunks()) void chunk;
    });
    await expect(chunked).rejects.toThrow(/larger than 1024 bytes/);
    expect(await text(guard, `${base}/ok`)).toBe('{"ok":true}');
    await guard.close();
  });

  it('times the whole request out, and stops at once when the caller aborts', async () => {
    const guard = createGuardedRequest({ allowPrivate: true, timeoutMs: 200 });
    await expect(text(guard, `${base}/slow`)).rejects.toMatchObject({ name: 'TimeoutError' });
    const caller = new AbortController();
    const pending = text(guard, `${base}/slow`, { signal: caller.signal });
    caller.abort(new DOMException('stop', 'AbortError'));
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await guard.close();
  });
});
