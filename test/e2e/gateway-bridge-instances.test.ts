/**
 * The revision bridge behind a load balancer: two Plaza instances on one database and one Redis,
 * a round-robin proxy in front (no stickiness). Through `/mcp/p/<provider>`:
 * - an SDK v1 client (2025) calls a tool of an SDK v2 provider that speaks only 2026-07-28 and asks
 *   the client to confirm (input_required, elicitation): the client's answer is a POST of its own,
 *   which the proxy sends to the other instance than the call's; it reaches the waiting call
 *   through Redis, and the call completes;
 * - an SDK v2 client pinned to 2026-07-28 calls a tool of an SDK v1 provider (sessions) that asks
 *   its client for sampling: the client gets an input_required round, and its retry, on the other
 *   instance, hands its answer to the provider's session on the first and gets the call's answer.
 * Runs on PGlite when TEST_REDIS_URL is set.
 */
import { randomBytes } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { awaitHealthy } from '../support/endpoints.ts';
import { type SdkUpstream, startSdkUpstream } from '../support/mcp-upstreams.ts';
import { connectV2 } from '../support/mcp-v2-client.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type RoundRobinProxy, startRoundRobinProxy } from '../support/round-robin-proxy.ts';
import { type SdkV2Upstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

const REDIS = process.env['TEST_REDIS_URL'];

describe.skipIf(!REDIS)('the revision bridge on two instances behind a round-robin proxy', () => {
  let first: TestPlaza;
  let second: TestPlaza;
  let proxy: RoundRobinProxy;
  let weather: SdkV2Upstream;
  let v1: SdkUpstream;
  let token = '';

  beforeAll(async () => {
    // A key prefix of this run's own: other tests may share the Redis.
    const env = {
      PLAZA_ALLOW_PRIVATE_TARGETS: '1',
      PLAZA_BACKGROUND: '0',
      REDIS_URL: REDIS!,
      PLAZA_RATE_LIMIT_KEY_PREFIX: `bridge-${randomBytes(6).toString('hex')}:`,
    };
    [first, weather, v1] = await Promise.all([
      startTestPlaza('pglite', { env }),
      startSdkV2Upstream({ legacy: 'reject', pages: [[{ name: 'confirm', description: 'Asks first.' }]] }),
      startSdkUpstream(),
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
    for (const [provider, url] of [
      ['weather', weather.url],
      ['sdk-v1', v1.url],
    ]) {
      const listed = await api('/api/mcp/listings', { provider, url, registered_by: 'ops@example.com', summary: 'x' });
      expect(listed.status).toBe(201);
      expect((await awaitHealthy(first.url, listed.body.id, { tries: 200, everyMs: 50 })).status, provider).toBe(
        'healthy',
      );
    }
    token = (await api('/api/agents', { display_name: 'Balanced agent', owner_context: 'acme' })).body.data.token;
    proxy = await startRoundRobinProxy([first.url, second.url]);
  }, 90_000);
  afterAll(async () => {
    await proxy?.close();
    await second?.close();
    await Promise.all([first?.close(), weather?.close(), v1?.close()]);
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
  it("completes a 2026-07-28 client's call whose 2025 provider asks for sampling, the retry on the other instance", async () => {
    const client = await connectV2(`${proxy.url}/mcp/p/sdk-v1`, token, {
      name: 'balanced-v2',
      capabilities: { sampling: {} },
      setup: (c) =>
        c.setRequestHandler('sampling/createMessage', async () => ({
          model: 'test-model',
          role: 'assistant' as const,
          content: { type: 'text' as const, text: 'sampled across' },
        })),
    });
    const from = proxy.log.length;
    try {
      const result = await client.callTool({ name: 'ask', arguments: { method: 'sampling/createMessage' } });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain('sampled across');
    } finally {
      await client.close();
    }
    // The call and its retry (the client's answer, with Plaza's requestState) on different instances.
    const posts = proxy.log.slice(from).filter((r) => r.body.includes('"tools/call"'));
    expect(posts).toHaveLength(2);
    expect(posts[1]!.body).toContain('requestState');
    expect(posts[1]!.backend).not.toBe(posts[0]!.backend);
  });
});
