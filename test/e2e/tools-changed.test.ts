/**
 * A provider that says its tool list changed (`notifications/tools/list_changed`, sent by the
 * SDK's McpServer when a tool is added) on a stream the gateway relays to an agent is probed again
 * at once: the new tool is in the catalog (and so on /mcp and in search) within seconds, not at
 * the next scheduled probe. The provider is the SDK's own server; the agent is the SDK client.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { createAccountService } from '../../src/accounts/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { listHealthy } from '../support/gateway-load.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

/** A stateful SDK provider whose tools can grow while sessions are open. */
async function startGrowingProvider(): Promise<{
  url: string;
  gets: () => number;
  initializes: () => number;
  addTool(name: string): void;
  close(): Promise<void>;
}> {
  const tools = ['echo'];
  const servers = new Set<McpServer>();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let gets = 0;
  let initializes = 0;
  const register = (server: McpServer, name: string) =>
    server.registerTool(
      name,
      { description: `The ${name} tool.`, inputSchema: { message: z.string() } },
      async ({ message }) => ({ content: [{ type: 'text', text: `${name}: ${message}` }] }),
    );
  const http: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (req.method === 'GET') gets += 1;
    const body: unknown = raw ? JSON.parse(raw) : undefined;
    if ((body as { method?: unknown } | undefined)?.method === 'initialize') initializes += 1;
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = transports.get(sessionId);
      if (!transport) return void res.writeHead(404).end();
      return transport.handleRequest(req, res, body);
    }
    const server = new McpServer({ name: 'growing', version: '1.0.0' });
    for (const name of tools) register(server, name);
    servers.add(server);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    gets: () => gets,
    initializes: () => initializes,
    addTool(name) {
      tools.push(name);
      // Registering on a connected McpServer sends notifications/tools/list_changed.
      for (const server of servers) register(server, name);
    },
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('a provider whose tool list changes', () => {
  let plaza: TestPlaza;
  let provider: Awaited<ReturnType<typeof startGrowingProvider>>;
  let token = '';
  let endpointId = '';

  beforeAll(async () => {
    provider = await startGrowingProvider();
    // No background loop: only the notification can bring the next probe.
    plaza = await startTestPlaza('pglite', { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0' } });
    const account = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email: 'growing@example.com',
    });
    token = (
      await createAgentService({ prisma: plaza.db.prisma, clock: systemClock }).create(account.account.id, {
        display_name: 'Watcher',
      })
    ).token;
    endpointId = await listHealthy(plaza.url, 'growing', provider.url);
  }, 60_000);
  afterAll(async () => {
    await plaza?.close();
    await provider?.close();
  });

  const catalogTools = async () =>
    ((await (await fetch(`${plaza.url}/api/mcp/tools?provider=growing`)).json()) as { tools: { name: string }[] }).tools
      .map((t) => t.name)
      .sort();

  it('is probed again when it says so on a relayed stream, and its new tool goes online', async () => {
    expect(await catalogTools()).toEqual(['echo']);
    const client = new Client({ name: 'watcher', version: '1.0.0' });
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(z.object({ method: z.literal('notifications/tools/list_changed') }) as never, () =>
        resolve(),
      ),
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp/p/growing`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      for (let i = 0; i < 100 && provider.gets() === 0; i++) await new Promise((r) => setTimeout(r, 20));
      provider.addTool('fresh');
      await changed;
      let names: string[] = [];
      for (let i = 0; i < 50; i++) {
        names = await catalogTools();
        if (names.includes('fresh')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(names).toEqual(['echo', 'fresh']);
    } finally {
      await client.close();
    }
  });

  it('probes at most once per 30 s however often a provider says so', async () => {
    const before = provider.initializes();
    for (let i = 0; i < 5; i++) plaza.marketplace.refreshTools(endpointId);
    await new Promise((r) => setTimeout(r, 1_000));
    // The test above probed moments ago: within 30 s, another notification brings none.
    expect(provider.initializes() - before).toBe(0);
  });
});
