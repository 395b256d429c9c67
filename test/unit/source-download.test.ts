/**
 * Pins the reasons downloadSource (probes/source-download.ts) gives for a failed download: they
 * are shown on the public source page, so they name the error code, never a resolved address or
 * OpenSSL's raw text from down the error's causes.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createGuardedFetch } from '../../probes/index.ts';
import { downloadSource } from '../../probes/source-download.ts';

describe('downloadSource', () => {
  let plain: Server;
  let port = 0;
  /** A port nothing listens on (taken, then given back). */
  let closedPort = 0;
  const guard = createGuardedFetch({ allowPrivate: true });
  beforeAll(async () => {
    // Speaks plain HTTP where https is asked for: the TLS handshake fails in OpenSSL.
    plain = createServer((_req, res) => res.end('not tls'));
    plain.listen(0, '127.0.0.1');
    await once(plain, 'listening');
    port = (plain.address() as AddressInfo).port;
    const gone = createServer().listen(0, '127.0.0.1');
    await once(gone, 'listening');
    closedPort = (gone.address() as AddressInfo).port;
    await new Promise((resolve) => gone.close(resolve));
  });
  afterAll(async () => {
    plain.close();
    await guard.close();
  });

  it.each([
    [
      'a refused connection',
      () => `https://127.0.0.1:${closedPort}/pkg.tgz`,
      /^unreachable: fetch failed \(ECONNREFUSED\)$/,
    ],
    [
      'a failed TLS handshake',
      () => `https://127.0.0.1:${port}/pkg.tgz`,
      /^unreachable: fetch failed \(ERR_SSL_[A-Z_]+\)$/,
    ],
  ])("says %s by its code, without the address or OpenSSL's text", async (_name, uri, reason) => {
    const result = await downloadSource(uri(), join(tmpdir(), 'plaza-never-written.tgz'), guard.fetch);
    expect(result).toMatchObject({ ok: false, transient: true, reason: expect.stringMatching(reason) });
    if (!result.ok) expect(result.reason).not.toMatch(/127\.0\.0\.1|SSL routines/);
  });
});
