/**
 * `/mcp` as an agent's SDK client sees it, against a provider on the MCP SDK's low-level Server
 * (which, unlike McpServer, publishes what a test asks of it): each tool listed with the `icons`
 * and `_meta` its provider declared (bad ones left out), also in `/api/mcp/tools`; a call the
 * provider refuses with a JSON-RPC error receipted as the provider's error, on `/mcp` and
 * `/mcp/p/<provider>`, while a genuine failure stays an upstream failure; a tool stored before
 * probes checked inputSchemas never served; a 503 answered under the request's id (on
 * `/mcp/p/<provider>` too).
 * Runs on PGlite and, when TEST_DATABASE_URL is set, PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

import { createAggregate, createPassthrough, createSessionSealer, createUpstreamPool } from '../../gateway/index.ts';
import { createAccountService } from '../../src/accounts/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { createConnectorCatalog } from '../../src/connectors/index.ts';
import { migrate } from '../../src/db/index.ts';
import { newId, systemClock } from '../../src/kernel/index.ts';
import { BACKENDS, createTestDatabase } from '../support/databases.ts';
import { listHealthy } from '../support/gateway-load.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** An inline PNG near the bound of one icon (8,192 characters). */
const BIG_PNG = `data:image/png;base64,${'A'.repeat(8_150)}`;

/** Icons as the provider declares them. */
const ICONS = [
  { src: 'https://studio.example/paint.png', mimeType: 'image/png', sizes: ['48x48', '96x96'], theme: 'light' },
  { src: PNG, mimeType: 'image/png' },
  { src: 'javascript:alert(1)' },
  { src: 'http://studio.example/paint.png' },
  { src: 'data:text/html;base64,PGgxPmhpPC9oMT4=' },
  { src: 'data:image/svg+xml,<svg onload="alert(1)"/>' },
  { src: `data:image/png;base64,${'A'.repeat(70_000)}` },
  { src: 'https://user:secret@studio.example/paint.png' },
  { src: 'https://studio.example/dark.png', theme: 'sepia' },
  { src: 7 },
  { src: 'https://studio.example/tiny.png', sizes: ['48 by 48'] },
  { src: 'https://studio.example/mime.png', mimeType: 'text/html' },
  // Members MCP does not name are not passed on.
  { src: 'https://studio.example/plain.svg', onload: 'alert(1)' },
  // Two large inline icons: the first is kept, the second would pass the bound on one tool's icons.
  { src: BIG_PNG },
  { src: BIG_PNG.replace('AAAA', 'BBBB') },
];

/** What Plaza keeps of ICONS and serves. */
const KEPT_ICONS = [ICONS[0], ICONS[1], { src: 'https://studio.example/plain.svg' }, { src: BIG_PNG }];

/** The tools the provider publishes. */
const TOOLS = [
  {
    name: 'paint',
    title: 'Paint',
    description: 'Paints a wall.',
    inputSchema: { type: 'object', properties: { colour: { type: 'string' } } },
    icons: ICONS,
    _meta: { 'studio.example/panel': { kind: 'palette' } },
  },
  // Icons and _meta not in MCP's shape: both dropped, the tool kept.
  {
    name: 'sketch',
    description: 'Sketches.',
    inputSchema: { type: 'object' },
    icons: 'https://studio.example/sketch.png',
    _meta: ['not', 'an', 'object'],
  },
  // A _meta past the bound on its size: not kept.
  {
    name: 'bulky',
    description: 'Carries a lot.',
    inputSchema: { type: 'object' },
    _meta: { blob: 'x'.repeat(20_000) },
  },
  { name: 'refuse', description: 'Refuses every call.', inputSchema: { type: 'object' } },
  { name: 'crash', description: 'Drops the connection.', inputSchema: { type: 'object' } },
];

/**
 * A stateless provider on the SDK's low-level Server. `refuse` answers a JSON-RPC error quoting
 * the caller's credential, an unknown tool gets the SDK's own -32602, and `crash` drops the
 * connection before any answer.
 */
async function startStudio(): Promise<{ url: string; close(): Promise<void> }> {
  const http: HttpServer = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body: any = raw === '' ? undefined : JSON.parse(raw);
    if (body?.method === 'tools/call' && body.params?.name === 'crash') return void req.socket.destroy();
    const server = new Server({ name: 'studio', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS as never }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      if (request.params.name === 'refuse') {
        throw new McpError(
          ErrorCode.InvalidParams,
          `colour must be a hex code; you sent ${String(extra.requestInfo?.headers['authorization'])}`,
        );
      }
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

describe.each(BACKENDS)('/mcp and its catalog on %s', (backend) => {
  let plaza: TestPlaza;
  let studio: Awaited<ReturnType<typeof startStudio>>;
  let apiKey = '';
  let token = '';

  beforeAll(async () => {
    [plaza, studio] = await Promise.all([
      startTestPlaza(backend, { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0' } }),
      startStudio(),
    ]);
    apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'studio@example.com',
      })
    ).apiKey;
    await listHealthy(plaza.url, 'studio', studio.url);
    token = (await json('/api/agents', { display_name: 'Studio agent', owner_context: 'studio' })).data.token;
  }, 60_000);
  afterAll(async () => {
    await studio?.close();
    await plaza?.close();
  });

  async function json(path: string, body?: unknown): Promise<any> {
    const res = await fetch(`${plaza.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.json();
  }

  async function agent(path: string, headers: Record<string, string> = {}): Promise<Client> {
    const client = new Client({ name: 'studio-agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
      }),
    );
    return client;
  }

  it("lists each tool on /mcp with the icons and _meta its provider declared, and leaves out icons that are unsafe or not in MCP's shape", async () => {
    const client = await agent('/mcp');
    // The SDK client checks the whole list against MCP's Tool schema: one bad icon would fail it.
    const listed = (await client.listTools()).tools.filter((t) => t.name.startsWith('studio__'));
    await client.close();
    const paint = listed.find((t) => t.name === 'studio__paint');
    expect(paint?.icons).toEqual(KEPT_ICONS);
    expect(paint?._meta).toEqual({ 'studio.example/panel': { kind: 'palette' } });
    const sketch = listed.find((t) => t.name === 'studio__sketch')!;
    expect(sketch).toBeDefined();
    expect('icons' in sketch || '_meta' in sketch).toBe(false);

    const catalog = (await json('/api/mcp/tools?provider=studio')).tools;
    expect(catalog.find((t: any) => t.tool === 'paint')).toMatchObject({
      icons: KEPT_ICONS,
      meta: { 'studio.example/panel': { kind: 'palette' } },
    });
    expect(catalog.find((t: any) => t.tool === 'sketch')).toMatchObject({ icons: null, meta: null });
    expect(catalog.find((t: any) => t.tool === 'bulky')).toMatchObject({ icons: null, meta: null });
  });

  it("receipts a call the provider refuses with a JSON-RPC error as the provider's error, one Plaza refuses as Plaza's, and a dropped connection as an upstream failure", async () => {
    const credential = { 'x-platform-upstream-authorization': 'Bearer studio-secret-123' };
    const aggregate = await agent('/mcp', { ...credential, 'x-platform-upstream-provider': 'studio' });
    const callIds = new Map<string, string>();
    for (const name of ['studio__refuse', 'studio__nosuch', 'studio__crash', 'nobody__paint']) {
      const result = await aggregate.callTool({ name, arguments: {} });
      expect(result.isError, name).toBe(true);
      callIds.set(name, (result._meta as any).platform.call_id);
    }
    await aggregate.close();
    const passthrough = await agent('/mcp/p/studio', credential);
    // The provider's JSON-RPC error reaches the SDK client as one (it throws it).
    await expect(passthrough.callTool({ name: 'refuse', arguments: {} })).rejects.toThrow(/colour must be a hex code/);
    await expect(passthrough.callTool({ name: 'nosuch', arguments: {} })).rejects.toThrow(/Unknown tool: nosuch/);
    expect((await passthrough.callTool({ name: 'crash', arguments: {} })).isError).toBe(true);
    await passthrough.close();

    const receipts: any[] = (await json('/api/receipts?limit=100')).data.receipts;
    const outcome = (callId: string) => receipts.find((r) => r.call_id === callId)?.outcome;
    const refusal =
      "provider's json-rpc error -32602: MCP error -32602: colour must be a hex code; you sent [credential removed]";
    const unknown = "provider's json-rpc error -32602: MCP error -32602: Unknown tool: nosuch";
    expect(outcome(callIds.get('studio__refuse')!)).toBe(refusal);
    expect(outcome(callIds.get('studio__nosuch')!)).toBe(unknown);
    expect(outcome(callIds.get('studio__crash')!)).toBe('upstream failure: the upstream closed the connection');
    expect(outcome(callIds.get('nobody__paint')!)).toBe(
      'refused by Plaza: unknown tool nobody__paint: expected <provider>__<tool> of an online connector; nothing was called',
    );
    // The same three on /mcp/p/studio: the answer of a refused call names no call id, its receipt is there all the same.
    const mine = new Set(callIds.values());
    const passed = receipts.filter((r) => r.provider === 'studio' && !mine.has(r.call_id));
    expect(passed.map((r) => `${r.tool}: ${r.outcome}`).sort()).toEqual([
      `crash: upstream failure: the upstream closed the connection`,
      `nosuch: ${unknown}`,
      `refuse: ${refusal}`,
    ]);
    for (const r of [...passed, ...receipts.filter((x) => mine.has(x.call_id))]) expect(r.status).toBe('error');
  });
});

/** The migration that deletes tools stored with an inputSchema MCP refuses. */
const CLEANUP = '20261127080000_drop_tools_with_invalid_input_schema';

describe.each(BACKENDS)('tools stored before probes checked their inputSchema, on %s', (backend) => {
  it('are on neither /mcp nor /api/mcp/tools once the database is migrated, and their endpoint counts only the rest', async () => {
    const t = await createTestDatabase(backend);
    onTestFinished(() => t.dispose());
    // The database as it was before the cleanup (a data migration only: the schema is the same).
    await t.db.sql.query('DELETE FROM "_prisma_migrations" WHERE "migration_name" = $1', [CLEANUP]);
    // As an older probe stored them: its endpoint healthy, every tool counted.
    const endpointId = newId('mcp');
    const schemas: Record<string, unknown> = {
      kept: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] },
      untyped: { properties: { colour: { type: 'string' } } },
      'string-schema': { type: 'string' },
      'null-type': { type: null },
      'property-not-object': { type: 'object', properties: { colour: 'string' } },
      'required-not-array': { type: 'object', required: 'colour' },
      'required-not-strings': { required: [1] },
    };
    await t.db.prisma.mcpEndpoint.create({
      data: {
        id: endpointId,
        provider: 'stale',
        url: 'http://127.0.0.1:1/mcp',
        registeredBy: 'ops@example.com',
        status: 'healthy',
        toolCount: 7,
        nextProbeAt: new Date(Date.now() + 86_400_000),
      },
    });
    await t.db.prisma.mcpTool.createMany({
      data: Object.entries(schemas).map(([name, inputSchema]) => ({
        id: newId('tool'),
        endpointId,
        provider: 'stale',
        name,
        description: name,
        inputSchema: inputSchema as never,
      })),
    });
    expect((await migrate(t.db.sql)).applied).toEqual([CLEANUP]);

    const plaza = await startTestPlaza(backend, { db: t.db, env: { PLAZA_BACKGROUND: '0' } });
    onTestFinished(() => plaza.close());
    const apiKey = (
      await createAccountService({ prisma: t.db.prisma, clock: systemClock }).createAccount({
        email: 'stale@example.com',
      })
    ).apiKey;
    const created = await fetch(`${plaza.url}/api/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'Stale agent' }),
    });
    const token = ((await created.json()) as any).data.token as string;
    const client = new Client({ name: 'stale-agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    // The SDK client refuses a whole list that holds one such tool.
    const listed = (await client.listTools()).tools.filter((tool) => tool.name.startsWith('stale__'));
    await client.close();
    expect(listed.map((tool) => tool.name)).toEqual(['stale__kept', 'stale__untyped']);
    const catalog = (await (await fetch(`${plaza.url}/api/mcp/tools?provider=stale`)).json()) as any;
    expect(catalog.tools.map((tool: any) => tool.tool)).toEqual(['kept', 'untyped']);
    expect(((await (await fetch(`${plaza.url}/api/mcp/endpoints/${endpointId}`)).json()) as any).tool_count).toBe(2);
  });
});

describe('the gateway while its database is unreachable', () => {
  it('answers 503 under the id of each request it was sent on /mcp and /mcp/p/<provider>, and under id null only when it names none', async () => {
    // Two real databases: the agents' and the catalog's, so each lookup can fail on its own.
    const [agentsDb, catalogDb] = await Promise.all([createTestDatabase('pglite'), createTestDatabase('pglite')]);
    const account = await createAccountService({ prisma: agentsDb.db.prisma, clock: systemClock }).createAccount({
      email: 'outage@example.com',
    });
    const agents = createAgentService({ prisma: agentsDb.db.prisma, clock: systemClock });
    const [seen, unseen] = await Promise.all([
      agents.create(account.account.id, { display_name: 'Seen agent' }),
      agents.create(account.account.id, { display_name: 'Unseen agent' }),
    ]);
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const catalog = createConnectorCatalog({ prisma: catalogDb.db.prisma, clock: systemClock });
    const common = {
      agents,
      receipts: { record: async () => undefined },
      assertionKey: async () => ({ kid: 'assert-1', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
    };
    const aggregate = createAggregate({ ...common, catalog, pool: createUpstreamPool({ timeoutMs: 5_000 }) });
    const passthrough = createPassthrough({
      ...common,
      directory: { byProvider: (p) => catalog.routable(p) },
      sealer: createSessionSealer(randomBytes(32)),
      upstreamTimeoutMs: 5_000,
    });
    const gateway = createServer((req, res) => {
      const provider = /^\/mcp\/p\/([a-z0-9-]+)$/.exec(req.url ?? '')?.[1];
      void (provider ? passthrough(req, res, provider) : aggregate(req, res));
    });
    gateway.listen(0, '127.0.0.1');
    await once(gateway, 'listening');
    const base = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
    onTestFinished(async () => {
      gateway.closeAllConnections();
      gateway.close();
    });
    const post = async (path: string, token: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(body),
      });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
    };
    const error = { code: -32603, message: expect.stringMatching(/cannot reach its database/) };

    // The catalog's database goes away: the passthrough cannot look its connector up.
    await catalogDb.db.close();
    const looked = await post('/mcp/p/studio', seen.token, {
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'paint', arguments: {} },
    });
    expect(looked).toEqual({ status: 503, retryAfter: '2', body: { jsonrpc: '2.0', id: 9, error } });

    // Then the agents' too: a credential never seen (so not cached) cannot be checked.
    await agentsDb.db.close();
    for (const path of ['/mcp', '/mcp/p/studio']) {
      const call = await post(path, unseen.token, {
        jsonrpc: '2.0',
        id: 41,
        method: 'tools/call',
        params: { name: 'studio__paint', arguments: {} },
      });
      expect(call, path).toEqual({ status: 503, retryAfter: '2', body: { jsonrpc: '2.0', id: 41, error } });
      const init = await post(path, unseen.token, {
        jsonrpc: '2.0',
        id: 'init-1',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'a', version: '1' } },
      });
      expect(init.body, path).toEqual({ jsonrpc: '2.0', id: 'init-1', error });
      const batch = await post(path, unseen.token, [
        { jsonrpc: '2.0', id: 'a', method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 7, method: 'ping' },
      ]);
      expect(batch, path).toEqual({
        status: 503,
        retryAfter: '2',
        body: [
          { jsonrpc: '2.0', id: 'a', error },
          { jsonrpc: '2.0', id: 7, error },
        ],
      });
      const notification = await post(path, unseen.token, { jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(notification, path).toEqual({ status: 503, retryAfter: '2', body: { jsonrpc: '2.0', id: null, error } });
    }
    // The SDK client is told the same, in words.
    const client = new Client({ name: 'outage-agent', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${unseen.token}` } },
    });
    await expect(client.connect(transport)).rejects.toThrow(/cannot reach its database/);
  });
});
