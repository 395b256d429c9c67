/**
 * The call pipeline's authorize hook (issue 33 item 6; issue 35's policy fills it) on `/mcp/p/<provider>`
 * and `/mcp`, against a real upstream and the official MCP SDK client: it is asked once per
 * tools/call with who calls what; a refusal is answered in-band (a stamped `isError` result under
 * the caller's id), receipted as refused, and nothing reaches the provider; an allowed call goes on.
 */
import { randomBytes } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  type AuthorizeInput,
  type CallReceipt,
  createAggregate,
  createPassthrough,
  createSessionSealer,
  createUpstreamPool,
} from '../../gateway/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { listen, type Listening } from '../support/listen.ts';

describe('the authorize hook of the call pipeline', () => {
  let t: TestDatabase;
  let gateway: Listening;
  let upstream: Listening;
  const called: string[] = [];
  const asked: AuthorizeInput[] = [];
  const receipts: CallReceipt[] = [];
  let token = '';

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const { agents, ...agent } = await createTestAgent(t.db.prisma, 'policy@example.com', {
      display_name: 'Policy test agent',
      owner_context: 'acme',
    });
    token = agent.token;
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    // A stateless MCP server with two tools, answering JSON: it records each tool it is asked to run.
    upstream = await listen(async (req, res) => {
      // No GET stream, no session to end (the spec's 405).
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      let text = '';
      for await (const chunk of req) text += chunk;
      const body = JSON.parse(text);
      if (body.id === undefined) return void res.writeHead(202).end();
      const result =
        body.method === 'initialize'
          ? {
              protocolVersion: body.params.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: 'two-tools', version: '1' },
            }
          : body.method === 'tools/list'
            ? { tools: ['echo', 'wipe'].map((name) => ({ name, inputSchema: { type: 'object' } })) }
            : (called.push(body.params.name), { content: [{ type: 'text', text: `ran ${body.params.name}` }] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
    });
    const connector = { provider: 'tools', url: upstream.url, endpointId: 'ep_tools' };
    const authorize = (input: AuthorizeInput) => {
      asked.push(input);
      return input.tool === 'wipe'
        ? {
            allowed: false as const,
            code: 'policy.destructive',
            reason: 'this agent may not run destructive tools',
            retryAfterS: 30,
          }
        : { allowed: true as const };
    };
    const common = {
      agents,
      authorize,
      receipts: { record: async (r: CallReceipt) => void receipts.push(r) },
      assertionKey: async () => ({ kid: 'k', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
    };
    const passthrough = createPassthrough({
      ...common,
      directory: { byProvider: async (p) => (p === 'tools' ? connector : undefined) },
      sealer: createSessionSealer(randomBytes(32)),
    });
    const aggregate = createAggregate({
      ...common,
      catalog: {
        onlineTools: async () => [],
        byProvider: async (p) => (p === 'tools' ? connector : undefined),
        needsCredential: async () => false,
      },
      pool: createUpstreamPool({ timeoutMs: 5_000 }),
    });
    gateway = await listen((req, res) => {
      const done = (error: unknown) => res.writeHead(500).end(String(error));
      if (req.url === '/mcp') aggregate(req, res).catch(done);
      else passthrough(req, res, 'tools').catch(done);
    });
  }, 60_000);

  afterAll(async () => {
    gateway?.server.close();
    upstream?.server.close();
    await t?.dispose();
  });

  it.each([
    ['/mcp/p/tools', 'echo', 'wipe'],
    ['/mcp', 'tools__echo', 'tools__wipe'],
  ])(
    'on %s: asks once per call, answers a refusal in-band with a receipt, and sends nothing upstream',
    async (path, allowedName, refusedName) => {
      const client = new Client({ name: 'policy-client', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gateway.url}${path}`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        asked.length = 0;
        called.length = 0;
        const before = receipts.length;
        const allowed = await client.callTool({ name: allowedName, arguments: {} });
        expect(allowed.isError).toBeFalsy();
        expect(allowed.content).toEqual([{ type: 'text', text: 'ran echo' }]);

        const refused = await client.callTool({ name: refusedName, arguments: {} });
        expect(refused.isError).toBe(true);
        expect((refused.content as { text: string }[])[0]!.text).toBe(
          'This agent may not run destructive tools (policy.destructive); retry in 30 s; nothing was called.',
        );
        const stamp = (refused._meta as { platform: { call_id: string } }).platform;
        expect(called).toEqual(['echo']);
        expect(asked.map((a) => [a.provider, a.method, a.tool])).toEqual([
          ['tools', 'tools/call', 'echo'],
          ['tools', 'tools/call', 'wipe'],
        ]);
        expect(asked[0]!.identity.displayName).toBe('Policy test agent');
        const mine = receipts.slice(before);
        expect(mine.map((r) => [r.tool, r.status])).toEqual([
          ['echo', 'ok'],
          ['wipe', 'error'],
        ]);
        expect(mine[1]).toMatchObject({
          callId: stamp.call_id,
          provider: 'tools',
          outcome: expect.stringMatching(
            /^refused by Plaza: this agent may not run destructive tools \(policy\.destructive\); retry in 30 s/,
          ),
        });
      } finally {
        await client.close();
      }
    },
  );
});
