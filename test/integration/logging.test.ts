/** Pins log redaction: credentials sent to Plaza never appear in its log lines. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describe('request logs', () => {
  let plaza: TestPlaza;
  beforeAll(async () => {
    plaza = await startTestPlaza('pglite');
  });
  afterAll(async () => {
    await plaza?.close();
  });

  it('carry the request id and redact Authorization, cookies and upstream credentials', async () => {
    const res = await fetch(`${plaza.url}/api/account`, {
      headers: {
        authorization: 'Bearer plz_secretsecretsec_thisisnotarealkeybutlookslikeone00000000',
        cookie: 'plaza_session=cookie-secret-value',
        'x-platform-upstream-authorization': 'Bearer upstream-third-party-token',
        'x-request-id': 'log-test-1',
      },
    });
    expect(res.status).toBe(401);
    await new Promise((r) => setTimeout(r, 100));
    const lines = plaza.logLines().join('\n');
    expect(lines).toContain('log-test-1');
    for (const secret of ['thisisnotarealkey', 'cookie-secret-value', 'upstream-third-party-token'])
      expect(lines).not.toContain(secret);
  });

  it('warn of refusals, but log what a protocol expects (404, 405) at info', async () => {
    const levelOf = async (id: string, path: string, init: RequestInit = {}) => {
      await (
        await fetch(`${plaza.url}${path}`, {
          ...init,
          headers: { ...(init.headers as Record<string, string>), 'x-request-id': id },
        })
      ).arrayBuffer();
      await new Promise((r) => setTimeout(r, 50));
      const line = plaza.logLines().find((l) => l.includes(`"request_id":"${id}"`) && l.includes('request completed'));
      return (JSON.parse(line!) as { level: number }).level;
    };
    expect(await levelOf('log-level-401', '/api/account')).toBe(40);
    expect(await levelOf('log-level-404', '/api/nothing-here')).toBe(30);
    expect(await levelOf('log-level-405', '/api/agents', { method: 'PUT' })).toBe(30);
    expect(await levelOf('log-level-200', '/api/products')).toBe(30);
  });
});
