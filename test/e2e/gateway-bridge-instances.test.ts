/**
 * The revision bridge behind a load balancer: two Plaza instances on one database and one Redis,
 * a round-robin proxy in front (no stickiness). An SDK v1 client (2025) calls, through
 * `/mcp/p/<provider>`, a tool of an SDK v2 provider that speaks only 2026-07-28 and asks the client
 * to confirm (input_required, elicitation): the client's answer is a POST of its own, which the
 * proxy sends to the other instance than the call's; it reaches the waiting call through Redis,
 * and the call completes. Runs on PGlite when TEST_REDIS_URL is set.
 */
import { randomBytes } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type RoundRobinProxy, startRoundRobinProxy } from '../support/round-robin-proxy.ts';
import { type SdkV2Upstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

const REDIS = process.env['TEST_REDIS_URL'];

describe.skipIf(!REDIS)('the revision bridge on two instances behind a round-robin proxy', () => {
  let first: TestPlaza;
  let second: TestPlaza;
  let proxy: RoundRobinProxy;
  let weather: SdkV2Upstream;
  let token = '';

  beforeAll(async () => {
    // A key prefix of this run's own: other tests may share the Redis.
    const env = {
      PLAZA_ALLOW_PRIVATE_TARGETS: '1',
      PLAZA_BACKGROUND: '0',
      REDIS_URL: REDIS!,
      PLAZA_RATE_LIMIT_KEY_PREFIX: `bridge-${randomBytes(6).toString('hex')}:`,
    };
    [first, weather] = await Promise.all([
      startTestPlaza('pglite', { env }),
      startSdkV2Upstream({ legacy: 'reject', pages: [[{ name: 'confirm', description: 'Asks first.' }]] }),
    ]);
    second = await startTestPlaza('pglite', { env, db: first.db });
    const apiKey = (
      await createAccountService({ prisma: first.db.prisma, clock: systemClock }).createAccount({
        email: 'instances@example.com',
      })
    ).apiKey;
    const api = (path: string, body: unknown) =>
      fetch(`${first.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
    const listed = await api('/api/mcp/listings', {
      provider: 'weather',
      url: weather.url,
      registered_by: 'ops@example.com',
      summary: 'x',
    });
    expect(listed.status).toBe(201);
    let status = '';
    for (let i = 0; i < 200 && status !== 'healthy'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = ((await (await fetch(`${first.url}/api/mcp/endpoints/${listed.body.id}`)).json()) as any).status;
    }
    expect(status).toBe('healthy');
    token = (await api('/api/agents', { display_name: 'Balanced agent', owner_context: 'acme' })).body.data.token;
    proxy = await startRoundRobinProxy([first.url, second.url]);
  }, 90_000);
  afterAll(async () => {
    await proxy?.close();
    await second?.close();
    await Promise.all([first?.close(), weather?.close()]);
  });

  it("completes a call whose client answers the provider's elicitation on the other instance", async () => {
    const client = new Client({ name: 'balanced', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { ok: true } }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp/p/weather`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      for (let i = 0; i < 2; i++) {
        const result = await client.callTool({ name: 'confirm', arguments: {} });
        expect(result.content).toEqual([{ type: 'text', text: 'confirmed true' }]);
      }
    } finally {
      await client.close();
    }
    // Each call and the client's answer to its elicitation: on which instance each landed.
    const calls = proxy.log.filter((r) => r.body.includes('"tools/call"'));
    const answers = proxy.log.filter((r) => r.body.includes('plaza-input-'));
    expect(calls).toHaveLength(2);
    expect(answers).toHaveLength(2);
    expect(answers.some((answer, i) => answer.backend !== calls[i]!.backend)).toBe(true);
  });
});
