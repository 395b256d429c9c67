/**
 * Pins DNS-rebinding protection on every gateway endpoint kind (`/mcp`, `/mcp/p/<provider>`,
 * `/mcp/p/platform`) through a real Plaza listening on loopback: a foreign Origin or Host gets 403
 * in the gateway's error shape before anything else (authentication included) reads the request; an
 * Origin on the allow-list, a loopback page, and a request without Origin go on — as the
 * conformance scenario `dns-rebinding-protection` sends them (Host and Origin of the server's own
 * loopback address).
 */
import { request } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestAgent } from '../support/agents.ts';
import { awaitHealthy, listProvider } from '../support/endpoints.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type SdkV2Upstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

const ENV = {
  PLAZA_ALLOW_PRIVATE_TARGETS: '1',
  PLAZA_BACKGROUND: '0',
  MCP_REGISTRY_URL: '',
  PLAZA_GATEWAY_ALLOWED_ORIGINS: 'https://app.example.org',
};
const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

/** POSTs `body` to `url` with exactly the Host and Origin given (fetch would not send such a Host). */
function post(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; body: any; contentType: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const dataLine = text.split('\n').find((line) => line.startsWith('data: '));
          let parsed: unknown;
          try {
            parsed = JSON.parse(dataLine ? dataLine.slice(6) : text);
          } catch {
            parsed = text;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, contentType: res.headers['content-type'] });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('DNS-rebinding protection on the gateway', () => {
  let plaza: TestPlaza;
  let upstream: SdkV2Upstream;
  let token = '';
  let host = '';

  beforeAll(async () => {
    [plaza, upstream] = await Promise.all([
      startTestPlaza('pglite', { env: ENV }),
      startSdkV2Upstream({ legacy: 'stateless', pages: [[{ name: 'echo' }]], calls: true }),
    ]);
    host = new URL(plaza.url).host;
    token = (await createTestAgent(plaza.db.prisma, 'origin-agent@example.com', { display_name: 'Origin agent' }))
      .token;
    const id = await listProvider(plaza.url, {
      provider: 'dual',
      url: upstream.url,
      registered_by: 'ops@example.com',
      summary: 'x',
    });
    await awaitHealthy(plaza.url, id, { tries: 400, everyMs: 50 });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([plaza?.close(), upstream?.close()]);
  });

  describe.each(['/mcp', '/mcp/p/dual', '/mcp/p/platform'])('%s', (path) => {
    const send = (headers: Record<string, string>) =>
      post(`${plaza.url}${path}`, { authorization: `Bearer ${token}`, ...headers }, ping);

    it('refuses a foreign Host and Origin (the rebinding attack) with 403, before authentication', async () => {
      const attacks: Record<string, string>[] = [
        { host: 'evil.example.com', origin: 'http://evil.example.com' },
        { host: `evil.example.com:${new URL(plaza.url).port}` },
        { host, origin: 'http://evil.example.com' },
        { host, origin: 'null' },
      ];
      for (const headers of attacks) {
        const answer = await send(headers);
        expect(answer.status, JSON.stringify(headers)).toBe(403);
        expect(answer.body, JSON.stringify(headers)).toMatchObject({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: expect.stringMatching(/^(Host|Origin) ".+" (is not|may not)/) },
        });
      }
      // Refused before the credential is read: no token, still 403 (not 401).
      const anonymous = await post(`${plaza.url}${path}`, { host: 'evil.example.com' }, ping);
      expect(anonymous.status).toBe(403);
    });

    it('serves a request without Origin, from its own loopback page, and from an allowed origin', async () => {
      const pages: Record<string, string>[] = [{}, { origin: `http://${host}` }, { origin: 'https://app.example.org' }];
      for (const headers of pages) {
        const answer = await send({ host, ...headers });
        expect(answer.status, JSON.stringify(headers)).toBe(200);
        expect(answer.body, JSON.stringify(headers)).toMatchObject({ jsonrpc: '2.0', id: 1, result: {} });
      }
    });
  });
});
