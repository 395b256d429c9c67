/**
 * A call Plaza refuses itself on `/mcp/p/<provider>` (the authorize hook's refusal), made by the
 * SDK v2 client pinned to MCP 2026-07-28 to an SDK v2 provider of that revision: the client accepts
 * Plaza's `isError` result (it carries `resultType: "complete"`; without it the client throws
 * "missing required resultType"), and nothing reaches the provider.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CallReceipt, createPassthrough, createSessionSealer } from '../../gateway/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { connectV2 } from '../support/mcp-v2-client.ts';
import { type SdkV2Upstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

describe("Plaza's own refusal of a 2026-07-28 call", () => {
  let t: TestDatabase;
  let upstream: SdkV2Upstream;
  let gateway: Server;
  let url = '';
  let token = '';
  const receipts: CallReceipt[] = [];

  beforeAll(async () => {
    [t, upstream] = await Promise.all([
      createTestDatabase('pglite'),
      startSdkV2Upstream({ legacy: 'reject', calls: true, pages: [[{ name: 'echo' }, { name: 'wipe' }]] }),
    ]);
    const { agents, ...agent } = await createTestAgent(t.db.prisma, 'refused-2026@example.com', {
      display_name: 'Refused agent',
    });
    token = agent.token;
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const passthrough = createPassthrough({
      directory: { byProvider: async () => ({ provider: 'modern', url: upstream.url, endpointId: 'ep_modern' }) },
      agents,
      authorize: ({ tool }) =>
        tool === 'wipe'
          ? { allowed: false, code: 'policy.destructive', reason: 'no destructive tools' }
          : { allowed: true },
      receipts: { record: async (r) => void receipts.push(r) },
      sealer: createSessionSealer(randomBytes(32)),
      assertionKey: async () => ({ kid: 'k', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
    });
    gateway = createServer((req, res) => {
      passthrough(req, res, 'modern').catch((error: unknown) => res.writeHead(500).end(String(error)));
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/mcp/p/modern`;
  }, 60_000);
  afterAll(async () => {
    gateway?.close();
    await upstream?.close();
    await t?.dispose();
  });

  it('is a complete isError result the SDK v2 client accepts, receipted refused, never sent upstream', async () => {
    const client = await connectV2(url, token, { name: 'modern' });
    try {
      const refused = await client.callTool({ name: 'wipe', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(refused.content).toEqual([
        { type: 'text', text: 'No destructive tools (policy.destructive); nothing was called.' },
      ]);
      expect(receipts.at(-1)).toMatchObject({
        tool: 'wipe',
        status: 'error',
        outcome: expect.stringMatching(/refused/),
      });
      expect(upstream.seen.some((s) => s.method === 'tools/call')).toBe(false);
      // An allowed call goes on, and its result is the provider's (complete already).
      expect((await client.callTool({ name: 'echo', arguments: { text: 'on' } })).content).toEqual([
        { type: 'text', text: 'echo: on' },
      ]);
    } finally {
      await client.close();
    }
  });
});
