/**
 * `/mcp` as a whole MCP server over its connectors, with real peers on both sides: the SDK v2
 * client pinned to 2026-07-28 and in auto mode, and the SDK v1 client (2025-11-25), against
 * `@modelcontextprotocol/server-everything`, an SDK v2 provider with the stateless legacy fallback
 * (resources, a template, a prompt, completion) and an SDK v1 provider with sessions (its `slow`
 * tool shows cancellations). The catalog is what a probe of each provider records: its tools and
 * capabilities, read from it at start. Receipts are kept in memory and checked.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Client as V2Client, type VersionNegotiationMode } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  type CallReceipt,
  type CatalogConnector,
  type CatalogTool,
  createAggregate,
  createSessionSealer,
  createUpstreamPool,
} from '../../gateway/index.ts';
import { createRedisSharedCalls } from '../../src/app/shared-calls.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import {
  type EverythingServer,
  type SdkUpstream,
  startEverything,
  startSdkUpstream,
} from '../support/mcp-upstreams.ts';
import { connectV2 } from '../support/mcp-v2-client.ts';
import { type SdkV2Upstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';
import { until } from '../support/until.ts';

const MODERN = '2026-07-28';
const REDIS = process.env['TEST_REDIS_URL'];

/** What a probe of `url` records: the provider's tools and capabilities (read with the SDK's client). */
async function probe(provider: string, url: string, endpointId: string) {
  const client = new Client({ name: 'probe', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const tools: CatalogTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      for (const t of page.tools)
        tools.push({
          provider,
          name: t.name,
          description: t.description ?? '',
          inputSchema: t.inputSchema as Record<string, unknown>,
          annotations: (t.annotations ?? {}) as Record<string, unknown>,
        });
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const connector: CatalogConnector = {
      provider,
      url,
      endpointId,
      capabilities: (client.getServerCapabilities() ?? {}) as Record<string, unknown>,
    };
    return { connector, tools };
  } finally {
    await client.close();
  }
}

/** Arguments a schema accepts: each required property its enum's first value, else a value of its type. */
function argumentsFor(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema['properties'] ?? {}) as Record<string, { type?: string; enum?: unknown[] }>;
  const required = (schema['required'] ?? []) as string[];
  const sample = (p: { type?: string; enum?: unknown[] }): unknown =>
    p.enum?.[0] ??
    ({ number: 1, integer: 1, boolean: true, object: {}, array: [] } as Record<string, unknown>)[p.type ?? ''] ??
    'x';
  return Object.fromEntries(required.map((name) => [name, sample(properties[name] ?? {})]));
}

/**
 * A provider answering its `confirm` tool with a 2026-07-28 multi-round-trip answer (an
 * elicitation and its own `requestState`) over a 2025 session — a stand-in for a 2026-only
 * provider until the pool speaks 2026-07-28 to upstreams — and, made again with the inputs and
 * that state, with what it got. `calls` keeps each tools/call's params.
 */
async function startRoundTripProvider(): Promise<{
  url: string;
  calls: Record<string, any>[];
  /** The Mcp-Param-Region header of each call of `region`. */
  regionHeaders: unknown[];
  close(): Promise<void>;
}> {
  const calls: Record<string, any>[] = [];
  const regionHeaders: unknown[] = [];
  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const message = raw
      ? (JSON.parse(raw) as { id?: number; method: string; params?: Record<string, any> })
      : undefined;
    if (!message || message.id === undefined) return res.writeHead(202).end();
    if (message.method === 'tools/call' && message.params?.['name'] === 'region') {
      regionHeaders.push(req.headers['mcp-param-region']);
      res.writeHead(200, { 'content-type': 'application/json' });
      const content = [{ type: 'text', text: `in ${String(message.params['arguments']?.['region'])}` }];
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content } }));
    }
    if (message.method === 'tools/call' && message.params?.['name'] === 'sample') {
      // As a 2026-07-28 server answers a call that needs a capability its client did not declare.
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: message.id,
          error: {
            code: -32021,
            message: 'Missing required client capability: sampling',
            data: { requiredCapabilities: { sampling: {} } },
          },
        }),
      );
    }
    let result: unknown;
    if (message.method === 'initialize')
      result = {
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'mrtr', version: '1' },
      };
    else if (message.method === 'prompts/get') {
      calls.push(message.params ?? {});
      result =
        message.params?.['requestState'] === 'provider-state-2'
          ? {
              messages: [
                {
                  role: 'user',
                  content: { type: 'text', text: `prompt after ${JSON.stringify(message.params['inputResponses'])}` },
                },
              ],
            }
          : {
              resultType: 'input_required',
              inputRequests: {
                ask: {
                  method: 'elicitation/create',
                  params: { mode: 'form', message: 'Which?', requestedSchema: { type: 'object', properties: {} } },
                },
              },
              requestState: 'provider-state-2',
            };
    } else if (message.method === 'tools/call') {
      calls.push(message.params ?? {});
      result =
        message.params?.['requestState'] === 'provider-state-1'
          ? { content: [{ type: 'text', text: `confirmed ${JSON.stringify(message.params['inputResponses'])}` }] }
          : {
              resultType: 'input_required',
              inputRequests: {
                ask: {
                  method: 'elicitation/create',
                  params: {
                    mode: 'form',
                    message: 'Sure?',
                    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
                  },
                },
              },
              requestState: 'provider-state-1',
            };
    } else result = {};
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    calls,
    regionHeaders,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('/mcp as a whole MCP server', () => {
  let t: TestDatabase;
  let gateway: Server;
  let everything: EverythingServer;
  let classic: SdkUpstream;
  let modern: SdkV2Upstream;
  /** A provider that speaks only 2026-07-28 (SDK v2, `legacy: 'reject'`): no `initialize` at all. */
  let only: SdkV2Upstream;
  let roundTrip: Awaited<ReturnType<typeof startRoundTripProvider>>;
  let url = '';
  /** The same aggregate with an authorize hook that hides everything__get-sum and refuses v2://notes/first. */
  let policedUrl = '';
  let token = '';
  let aggregate: ReturnType<typeof createAggregate>;
  /** Two more instances of /mcp sharing cancellations through Redis (with TEST_REDIS_URL). */
  let instanceUrls: string[] = [];
  const redisClients: { close(): Promise<void> }[] = [];
  const receipts: CallReceipt[] = [];
  const connectors = new Map<string, CatalogConnector>();
  const tools: CatalogTool[] = [];

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const { agents, ...agent } = await createTestAgent(t.db.prisma, 'whole@example.com', {
      display_name: 'Newcomer',
      owner_context: 'acme',
    });
    token = agent.token;
    [everything, classic, modern] = await Promise.all([
      startEverything(),
      startSdkUpstream(),
      startSdkV2Upstream({ legacy: 'stateless', pages: [[{ name: 'echo' }]], features: true, name: 'v2' }),
    ]);
    for (const [provider, upstreamUrl] of [
      ['everything', everything.url],
      ['classic', classic.url],
      ['modern', modern.url],
    ] as const) {
      const found = await probe(provider, upstreamUrl, `ep_${provider}`);
      connectors.set(provider, found.connector);
      tools.push(...found.tools);
    }
    // A 2026-only provider, probed as Plaza's probe sees it (server/discover, then tools/list in
    // 2026-07-28; the catalog records the revision it offers, probe-revisions.test.ts).
    only = await startSdkV2Upstream({ legacy: 'reject', pages: [[{ name: 'echo' }]], features: true, name: 'only' });
    {
      const prober = await connectV2(only.url, undefined, { name: 'probe', mode: { pin: MODERN } });
      try {
        for (const t of (await prober.listTools()).tools)
          tools.push({
            provider: 'only',
            name: t.name,
            description: t.description ?? '',
            inputSchema: t.inputSchema as Record<string, unknown>,
            annotations: {},
          });
        connectors.set('only', {
          provider: 'only',
          url: only.url,
          endpointId: 'ep_only',
          capabilities: (prober.getServerCapabilities() ?? {}) as Record<string, unknown>,
          protocolVersions: [MODERN],
        });
      } finally {
        await prober.close();
      }
    }
    roundTrip = await startRoundTripProvider();
    connectors.set('asks', {
      provider: 'asks',
      url: roundTrip.url,
      endpointId: 'ep_asks',
      capabilities: { tools: {} },
    });
    tools.push(
      { provider: 'asks', name: 'confirm', description: 'asks first', inputSchema: {}, annotations: {} },
      { provider: 'strict', name: 'sample', description: 'needs sampling', inputSchema: {}, annotations: {} },
      {
        provider: 'strict',
        name: 'region',
        description: 'routes on its region',
        inputSchema: {
          type: 'object',
          properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
          required: ['region'],
        },
        annotations: {},
      },
    );
    // The same provider spoken to as a 2026-07-28 one (stateless): it refuses `sample` with -32021.
    connectors.set('strict', {
      provider: 'strict',
      url: roundTrip.url,
      endpointId: 'ep_strict',
      capabilities: { tools: {} },
      protocolVersions: ['2026-07-28'],
    });
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const sealer = createSessionSealer(randomBytes(32));
    const options: Parameters<typeof createAggregate>[0] = {
      agents,
      receipts: { record: async (r) => void receipts.push(r) },
      assertionKey: async () => ({ kid: 'assert-1', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
      catalog: {
        onlineTools: async () => tools,
        byProvider: async (p) => connectors.get(p),
        needsCredential: async () => false,
        onlineConnectors: async () => [...connectors.values()],
      },
      pool: createUpstreamPool({ timeoutMs: 20_000 }),
      sealer: async () => sealer,
      listChangesEveryMs: 100,
    };
    aggregate = createAggregate(options);
    const policed = createAggregate({
      ...options,
      authorize: ({ tool, method }) =>
        tool === 'get-sum' || tool === 'v2://notes/first'
          ? { allowed: false, code: 'denied', reason: `rule 0 denies ${method} of ${tool}` }
          : { allowed: true },
    });
    const instances: ReturnType<typeof createAggregate>[] = [];
    if (REDIS) {
      const keyPrefix = `agg2026-${randomBytes(4).toString('hex')}:`;
      for (let i = 0; i < 2; i++) {
        const redis = new Redis(REDIS, { lazyConnect: false });
        const sharedCalls = createRedisSharedCalls({ redis, keyPrefix, log: createLogger({ level: 'silent' }) });
        redisClients.push({
          close: async () => {
            await sharedCalls.close();
            redis.disconnect();
          },
        });
        instances.push(createAggregate({ ...options, sharedCalls }));
      }
    }
    gateway = createServer((req, res) => {
      const instance = /^\/instance(\d)\/mcp$/.exec(req.url ?? '')?.[1];
      const handler =
        instance !== undefined ? instances[Number(instance)]! : req.url === '/policed/mcp' ? policed : aggregate;
      void handler(req, res);
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
    url = `${base}/mcp`;
    policedUrl = `${base}/policed/mcp`;
    instanceUrls = [`${base}/instance0/mcp`, `${base}/instance1/mcp`];
  }, 90_000);

  afterAll(async () => {
    gateway?.closeAllConnections();
    await new Promise((r) => gateway?.close(r));
    await Promise.all([everything?.stop(), classic?.close(), modern?.close(), only?.close(), roundTrip?.close()]);
    await Promise.all(redisClients.map((c) => c.close()));
    await t?.dispose();
  });

  const headers = () => ({ authorization: `Bearer ${token}` });

  /**
   * A raw 2026-07-28 tools/call of `name` on /mcp (the envelope in `_meta`, the revision's three
   * headers), with `params` and `capabilities` declared, and `extra` headers on top.
   */
  const rawModernCall = (
    id: number,
    name: string,
    params: Record<string, unknown>,
    capabilities: Record<string, unknown> = {},
    extra: Record<string, string> = {},
  ) =>
    fetch(url, {
      method: 'POST',
      headers: {
        ...headers(),
        ...extra,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': name,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name,
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': capabilities,
          },
        },
      }),
    });

  async function v2(mode: VersionNegotiationMode, at = url): Promise<V2Client> {
    return connectV2(at, token, { name: 'newcomer', mode });
  }

  async function v1(): Promise<Client> {
    const client = new Client({ name: 'classic-client', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: headers() } }));
    return client;
  }

  /** The receipts written since `from`. */
  const since = (from: number) => receipts.slice(from);

  it('a client pinned to 2026-07-28 lists and calls every tool, resource and prompt of server-everything and of an SDK v2 provider', async () => {
    const client = await v2({ pin: MODERN });
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      const listed = await client.listTools();
      const names = listed.tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'modern__echo']));
      expect(names).toHaveLength(tools.length);

      const from = receipts.length;
      const echoed = await client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'Echo: hi' }]);
      const sum = await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } });
      expect(JSON.stringify(sum.content)).toContain('5');
      const v2echo = await client.callTool({ name: 'modern__echo', arguments: { text: 'there' } });
      expect(v2echo.content).toEqual([{ type: 'text', text: 'v2 echo: there' }]);
      expect(since(from).map((r) => [r.provider, r.tool, r.status])).toEqual([
        ['everything', 'echo', 'ok'],
        ['everything', 'get-sum', 'ok'],
        ['modern', 'echo', 'ok'],
      ]);
      // Every other tool of both, with arguments its schema asks for: each answered, each receipted once.
      const rest = listed.tools.filter(
        (t) =>
          (t.name.startsWith('everything__') || t.name.startsWith('modern__')) && !/__(echo|get-sum)$/.test(t.name),
      );
      const restFrom = receipts.length;
      for (const tool of rest) {
        const args = { ...argumentsFor(tool.inputSchema as Record<string, unknown>) };
        if (tool.name === 'everything__trigger-long-running-operation')
          Object.assign(args, { duration: 0.1, steps: 1 });
        const result = await client.callTool({ name: tool.name, arguments: args });
        expect(result.content, tool.name).toBeDefined();
      }
      expect(since(restFrom).map((r) => `${r.provider}__${r.tool}`)).toEqual(rest.map((t) => t.name));

      const resources = (await client.listResources()).resources;
      const uris = resources.map((r) => r.uri);
      expect(uris).toContain('plaza+modern:v2://notes/first');
      expect(uris.some((u) => u.startsWith('plaza+everything:'))).toBe(true);
      const readFrom = receipts.length;
      for (const resource of resources) {
        const read = await client.readResource({ uri: resource.uri });
        expect(read.contents[0]?.uri).toBe(resource.uri);
      }
      const reads = since(readFrom);
      expect(reads).toHaveLength(resources.length);
      expect(reads.every((r) => r.tool === 'resources/read' && r.status === 'ok')).toBe(true);
      expect(reads.find((r) => r.provider === 'modern')?.outcome).toBe('v2://notes/first: ok: 1 content item');

      const templates = (await client.listResourceTemplates()).resourceTemplates;
      expect(templates.map((tp) => tp.uriTemplate)).toContain('plaza+modern:v2://notes/{id}');
      const byTemplate = await client.readResource({ uri: 'plaza+modern:v2://notes/42' });
      expect(byTemplate.contents).toEqual([
        { uri: 'plaza+modern:v2://notes/42', mimeType: 'text/plain', text: 'note at v2://notes/42' },
      ]);

      const prompts = (await client.listPrompts()).prompts;
      expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['modern__greet']));
      expect(prompts.some((p) => p.name.startsWith('everything__'))).toBe(true);
      const promptFrom = receipts.length;
      for (const prompt of prompts) {
        const args = Object.fromEntries((prompt.arguments ?? []).map((a) => [a.name, 'x']));
        const got = await client.getPrompt({ name: prompt.name, arguments: args }).catch((e: Error) => e);
        // A prompt whose arguments take other values than 'x' is refused by its provider: still receipted.
        if (!(got instanceof Error)) expect(got.messages.length).toBeGreaterThan(0);
      }
      expect(since(promptFrom).map((r) => r.tool)).toEqual(prompts.map(() => 'prompts/get'));
      const greeting = await client.getPrompt({ name: 'modern__greet', arguments: { name: 'Ada' } });
      expect(greeting.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Hello, Ada!' } }]);

      const completed = await client.complete({
        ref: { type: 'ref/prompt', name: 'modern__greet' },
        argument: { name: 'name', value: 'A' },
      });
      expect(completed.completion.values).toEqual(['Ada', 'Alan']);
      // Every request upstream carried the agent's card.
      const read = modern.seen.find((s) => s.method === 'resources/read');
      expect((read?.meta?.['platform'] as { display_name?: string } | undefined)?.display_name).toBe('Newcomer');
    } finally {
      await client.close();
    }
  }, 120_000);

  it('in auto mode the SDK v2 client negotiates 2026-07-28 with /mcp and lists its tools', async () => {
    const client = await v2('auto');
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect((await client.listTools()).tools.length).toBe(tools.length);
      const call = await client.callTool({ name: 'modern__echo', arguments: { text: 'auto' } });
      expect(call.content).toEqual([{ type: 'text', text: 'v2 echo: auto' }]);
    } finally {
      await client.close();
    }
  });

  it('the SDK v1 client (2025-11-25) lists and reads resources and prompts, completes, sets the log level and gets progress', async () => {
    const client = await v1();
    try {
      expect((await client.listTools()).tools.length).toBe(tools.length);
      const resources = (await client.listResources()).resources;
      expect(resources.map((r) => r.uri)).toContain('plaza+modern:v2://notes/first');
      const read = await client.readResource({ uri: 'plaza+modern:v2://notes/first' });
      expect(read.contents).toEqual([
        { uri: 'plaza+modern:v2://notes/first', mimeType: 'text/plain', text: 'note at v2://notes/first' },
      ]);
      expect((await client.listResourceTemplates()).resourceTemplates.length).toBeGreaterThan(1);
      const greeting = await client.getPrompt({ name: 'modern__greet', arguments: { name: 'Grace' } });
      expect(greeting.messages[0]?.content).toEqual({ type: 'text', text: 'Hello, Grace!' });
      const completed = await client.complete({
        ref: { type: 'ref/prompt', name: 'modern__greet' },
        argument: { name: 'name', value: 'G' },
      });
      expect(completed.completion.values).toEqual(['Grace']);
      await expect(client.setLoggingLevel('warning')).resolves.toEqual({});
      const progress: number[] = [];
      const result = await client.callTool(
        { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
        undefined,
        { onprogress: (p) => void progress.push(p.progress) },
      );
      expect(result.isError).toBeFalsy();
      expect(progress).toEqual([1, 2, 3]);
      // A URI that names no provider of /mcp is refused as MCP's "resource not found".
      await expect(client.readResource({ uri: 'v2://notes/first' })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a 2026-07-28 client gets a call’s progress on its stream', async () => {
    const client = await v2({ pin: MODERN });
    try {
      const progress: number[] = [];
      const result = await client.callTool(
        { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
        { onprogress: (p) => void progress.push(p.progress) },
      );
      expect(result.isError).toBeFalsy();
      expect(progress).toEqual([1, 2, 3]);
    } finally {
      await client.close();
    }
  });

  for (const [era, stream] of [
    ['2025-11-25', false],
    ['2025-11-25', true],
    [MODERN, false],
    [MODERN, true],
  ] as const) {
    it(`a call the ${era} client cancels${stream ? ' (on a stream: an SDK server serves it)' : ''} is cancelled upstream and receipted as cancelled`, async () => {
      const client = era === MODERN ? await v2({ pin: MODERN }) : await v1();
      const aborted = classic.slow.aborted;
      const cancels = classic.seen.filter((s) => s.body?.method === 'notifications/cancelled').length;
      const from = receipts.length;
      try {
        const controller = new AbortController();
        const started = classic.seen.length;
        const params = { name: 'classic__slow', arguments: { ms: 15_000 } };
        // A progress token takes the call off the fast path, onto the SDK's server of its revision.
        const onprogress = () => undefined;
        // SDK v2's callTool takes its options second, SDK v1's third.
        const call =
          client instanceof V2Client
            ? client.callTool(params, { signal: controller.signal, ...(stream ? { onprogress } : {}) })
            : client.callTool(params, undefined, { signal: controller.signal, ...(stream ? { onprogress } : {}) });
        const outcome = call.then(
          () => 'answered',
          () => 'rejected',
        );
        await until('the upstream to get the call', () =>
          classic.seen.slice(started).some((s) => s.body?.method === 'tools/call'),
        );
        controller.abort();
        expect(await outcome).toBe('rejected');
        await until('the receipt', () => since(from).length === 1);
        expect(since(from)[0]).toMatchObject({ provider: 'classic', tool: 'slow', status: 'error' });
        expect(since(from)[0]!.outcome).toMatch(/^cancelled/);
        await until('the upstream to stop', () => classic.slow.aborted === aborted + 1);
        expect(classic.seen.filter((s) => s.body?.method === 'notifications/cancelled')).toHaveLength(cancels + 1);
      } finally {
        await client.close();
      }
    }, 30_000);
  }

  it.runIf(REDIS)('a 2025 cancellation sent to another instance reaches the call (Redis)', async () => {
    const post = (at: string, body: unknown) =>
      fetch(at, {
        method: 'POST',
        headers: { ...headers(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(body),
      });
    const aborted = classic.slow.aborted;
    const from = receipts.length;
    const started = classic.seen.length;
    const call = post(instanceUrls[0]!, {
      jsonrpc: '2.0',
      id: 'far-1',
      method: 'tools/call',
      params: { name: 'classic__slow', arguments: { ms: 15_000 } },
    });
    await until('the upstream to get the call', () =>
      classic.seen.slice(started).some((s) => s.body?.method === 'tools/call'),
    );
    const cancel = await post(instanceUrls[1]!, {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'far-1', reason: 'changed my mind' },
    });
    expect(cancel.status).toBe(202);
    const answered = (await (await call).json()) as { result: { isError?: boolean } };
    expect(answered.result.isError).toBe(true);
    await until('the receipt', () => since(from).length === 1);
    // Only the call's key crosses instances (hashed), not the caller's words.
    expect(since(from)[0]!.outcome).toBe('cancelled: cancelled by the caller');
    await until('the upstream to stop', () => classic.slow.aborted === aborted + 1);
  });

  it('answers server/discover and refuses a 2026-07-28 request whose headers disagree with its body', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const post = (body: unknown, extra: Record<string, string>) =>
      fetch(url, {
        method: 'POST',
        headers: {
          ...headers(),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...extra,
        },
        body: JSON.stringify(body),
      });
    const discover = await post(
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
    );
    expect(discover.status).toBe(200);
    const discovered = (await discover.json()) as { result: Record<string, unknown> };
    expect(discovered.result).toMatchObject({
      resultType: 'complete',
      ttlMs: 60_000,
      cacheScope: 'public',
      supportedVersions: expect.arrayContaining([MODERN]),
      capabilities: { tools: { listChanged: true }, resources: {}, prompts: {}, completions: {} },
    });
    const listed = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
    );
    expect(((await listed.json()) as { result: Record<string, unknown> }).result).toMatchObject({
      resultType: 'complete',
      ttlMs: 2000,
      cacheScope: 'private',
    });
    const resources = await post(
      { jsonrpc: '2.0', id: 21, method: 'resources/list', params: { _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'resources/list' },
    );
    expect(((await resources.json()) as { result: Record<string, unknown> }).result).toMatchObject({
      resultType: 'complete',
      ttlMs: 5000,
      cacheScope: 'private',
    });
    // The fast path answers a whole 2026-07-28 call, with its resultType.
    const called = await post(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'modern__echo', arguments: { text: 'fast' }, _meta: envelope },
      },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'modern__echo' },
    );
    expect(((await called.json()) as { result: Record<string, unknown> }).result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'v2 echo: fast' }],
    });
    const mismatch = await post(
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'modern__echo', arguments: {}, _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'everything__echo' },
    );
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as { error: { code: number } }).error.code).toBe(-32020);
    const unsupported = await post(
      {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/list',
        params: { _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      },
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
    );
    expect(((await unsupported.json()) as { error: { code: number } }).error.code).toBe(-32022);
    // A revision before 2026-07-28 that /mcp does not serve: the same code, and the revisions it does.
    const older = await post(
      { jsonrpc: '2.0', id: 6, method: 'tools/list', params: {} },
      { 'mcp-protocol-version': '1999-01-01' },
    );
    expect(older.status).toBe(400);
    const { error } = (await older.json()) as { error: { code: number; message: string } };
    expect(error.code).toBe(-32022);
    expect(error.message).toContain('"1999-01-01"');
    expect(error.message).toContain('2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05');
  });

  it('asks the authorize hook before showing each tool and resource and before a read, and receipts the refusal', async () => {
    const client = await v2({ pin: MODERN }, policedUrl);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('everything__echo');
      expect(names).not.toContain('everything__get-sum');
      const uris = (await client.listResources()).resources.map((r) => r.uri);
      expect(uris).not.toContain('plaza+modern:v2://notes/first');
      expect(uris.length).toBeGreaterThan(0);
      const from = receipts.length;
      const readsOfFirst = () =>
        modern.seen.filter((s) => s.method === 'resources/read' && s.params?.['uri'] === 'v2://notes/first').length;
      const readsBefore = readsOfFirst();
      await expect(client.readResource({ uri: 'plaza+modern:v2://notes/first' })).rejects.toMatchObject({
        code: -32600,
        message: expect.stringContaining('rule 0 denies resources/read of v2://notes/first'),
      });
      expect(since(from)).toMatchObject([
        {
          provider: 'modern',
          tool: 'resources/read',
          status: 'denied',
          outcome: expect.stringContaining('refused by Plaza'),
        },
      ]);
      // The refused read never went upstream.
      expect(readsOfFirst()).toBe(readsBefore);
    } finally {
      await client.close();
    }
  });

  it('relays a provider’s log messages on the request’s stream, at the level a 2026-07-28 request asks for', async () => {
    const classicClient = await v1();
    const modernClient = await v2({ pin: MODERN });
    const logs: { era: string; data: unknown }[] = [];
    classicClient.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void logs.push({ era: '2025', data: n.params.data }),
    );
    modernClient.setNotificationHandler(
      'notifications/message',
      (n) => void logs.push({ era: MODERN, data: n.params.data }),
    );
    try {
      // A progress token puts the call on a stream (a plain call is answered as one JSON body).
      const onprogress = () => undefined;
      await classicClient.callTool({ name: 'classic__ask', arguments: { method: 'ping' } }, undefined, { onprogress });
      await modernClient.callTool({ name: 'classic__ask', arguments: { method: 'ping' } }, { onprogress });
      // 2026-07-28 has no logging/setLevel: each request names its level in its envelope.
      await modernClient.callTool(
        { name: 'classic__ask', arguments: { method: 'ping' }, _meta: { 'io.modelcontextprotocol/logLevel': 'error' } },
        { onprogress },
      );
      expect(logs).toEqual([
        { era: '2025', data: 'asking ping' },
        { era: MODERN, data: 'asking ping' },
      ]);
    } finally {
      await classicClient.close();
      await modernClient.close();
    }
  });

  it('a plain 2025 call gets the provider’s log messages on an event stream, and stays one JSON body when there are none', async () => {
    const classicClient = await v1();
    const logs: unknown[] = [];
    classicClient.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.data));
    try {
      const result = await classicClient.callTool({ name: 'classic__ask', arguments: { method: 'ping' } });
      expect(result.isError).toBeFalsy();
      expect(logs).toEqual(['asking ping']);
    } finally {
      await classicClient.close();
    }
    const plain = (name: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          ...headers(),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name, arguments: name === 'classic__ask' ? { method: 'ping' } : { message: 'hi' } },
        }),
      });
    const streamed = await plain('classic__ask');
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    const events = (await streamed.text()).split('\n').filter((line) => line.startsWith('data: '));
    expect(events.map((line) => JSON.parse(line.slice(6)))).toEqual([
      expect.objectContaining({ method: 'notifications/message' }),
      expect.objectContaining({ id: 3, result: expect.objectContaining({ content: expect.any(Array) }) }),
    ]);
    const json = await plain('everything__echo');
    expect(json.headers.get('content-type')).toBe('application/json');
    expect(await json.json()).toMatchObject({ id: 3, result: { content: [{ type: 'text', text: 'Echo: hi' }] } });
  });

  it('tells a 2026-07-28 client listening with subscriptions/listen that the tool list changed', async () => {
    const client = await v2({ pin: MODERN });
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
    try {
      const subscription = await client.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter.toolsListChanged).toBe(true);
      // A provider's new tool, as the catalog learns it from a probe (it stays: the list changes once).
      tools.push({ provider: 'modern', name: 'added', description: 'new', inputSchema: {}, annotations: {} });
      await until('the list change', () => changed === 1);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('modern__added');
      // Told on its own too (aggregate.toolsChanged()).
      aggregate.toolsChanged();
      await until('the second list change', () => changed === 2);
      await subscription.close();
    } finally {
      await client.close();
    }
  });

  it('refuses a provider’s sampling request in-band at once: the call ends with the refusal, receipted', async () => {
    const client = await v1();
    const from = receipts.length;
    try {
      const result = await client.callTool({ name: 'classic__ask', arguments: { method: 'sampling/createMessage' } });
      expect(result.content).toEqual([
        { type: 'text', text: expect.stringMatching(/^sampling\/createMessage failed: .*\/mcp\/p\/classic/) },
      ]);
      expect(since(from)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('relays a provider’s input_required round trip to a 2026-07-28 client with its requestState sealed, and refuses it to a 2025 client', async () => {
    const asked: unknown[] = [];
    const client = await connectV2(url, token, {
      name: 'newcomer',
      mode: { pin: MODERN },
      capabilities: { elicitation: {} },
      setup: (c) =>
        c.setRequestHandler('elicitation/create', (request) => {
          asked.push(request.params);
          return { action: 'accept', content: { ok: true } };
        }),
    });
    const from = receipts.length;
    try {
      const result = await client.callTool({ name: 'asks__confirm', arguments: {} });
      expect(result.content).toEqual([
        { type: 'text', text: 'confirmed {"ask":{"action":"accept","content":{"ok":true}}}' },
      ]);
      expect(asked).toEqual([expect.objectContaining({ message: 'Sure?' })]);
      // The provider got its own state back, not Plaza's sealed one, and the agent's card each time.
      expect(roundTrip.calls.map((c) => c['requestState'])).toEqual([undefined, 'provider-state-1']);
      expect(roundTrip.calls.every((c) => c['_meta']?.['platform']?.['display_name'] === 'Newcomer')).toBe(true);
      expect(since(from).map((r) => r.outcome)).toEqual([
        expect.stringMatching(/^input required: the provider asks the client for 1 input \(elicitation\/create\)/),
        'ok: 1 content item',
      ]);
      // A prompt's round trip crosses the same way (SDK v2's server answers it).
      const prompt = await client.getPrompt({ name: 'asks__sure' });
      expect(prompt.messages).toEqual([
        {
          role: 'user',
          content: { type: 'text', text: 'prompt after {"ask":{"action":"accept","content":{"ok":true}}}' },
        },
      ]);
      expect(roundTrip.calls.slice(2).map((c) => c['requestState'])).toEqual([undefined, 'provider-state-2']);
    } finally {
      await client.close();
    }
    // A state Plaza did not seal for this agent is refused, and nothing is called.
    const forged = await rawModernCall(
      9,
      'asks__confirm',
      {
        arguments: {},
        requestState: 'provider-state-1',
        inputResponses: { ask: { action: 'accept', content: { ok: true } } },
      },
      { elicitation: {} },
    );
    // Refused as the request's error (-32602), not a result: a tampered state is never taken for none.
    const refused = (await forged.json()) as { id: number; error?: { code: number; message: string } };
    expect(refused).toMatchObject({ id: 9, error: { code: -32602 } });
    expect(refused.error?.message).toContain('The requestState was not issued by Plaza');
    expect(roundTrip.calls).toHaveLength(4);
    const classicClient = await v1();
    try {
      const result = await classicClient.callTool({ name: 'asks__confirm', arguments: {} });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain('passes only to a 2026-07-28 client');
    } finally {
      await classicClient.close();
    }
  });

  it('a 2025 client that declared sampling and elicitation gets a sealed session and answers a provider’s requests on the call’s stream, one receipt per call', async () => {
    const client = new Client(
      { name: 'asked-client', version: '1' },
      { capabilities: { sampling: {}, elicitation: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      asked.push(request.method);
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'sampled words' } };
    });
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.method);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: headers() } });
    await client.connect(transport);
    const session = transport.sessionId;
    expect(session).toMatch(/^pss1\./);
    const from = receipts.length;
    try {
      const sampled = await client.callTool({
        name: 'everything__trigger-sampling-request',
        arguments: { prompt: 'hello', maxTokens: 10 },
      });
      expect(sampled.isError).toBeFalsy();
      expect(JSON.stringify(sampled.content)).toContain('sampled words');
      const elicited = await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} });
      expect(elicited.isError).toBeFalsy();
      expect(JSON.stringify(elicited.content)).toContain('- Name: Ada');
      // A 2026-07-28 provider's input_required is asked of it the same way.
      const confirmed = await client.callTool({ name: 'asks__confirm', arguments: {} });
      expect(confirmed.content).toEqual([
        { type: 'text', text: 'confirmed {"ask":{"action":"accept","content":{"name":"Ada"}}}' },
      ]);
      // A call that asks for progress (a progress token) is asked of the same way.
      const withProgress = await client.callTool(
        { name: 'everything__trigger-elicitation-request', arguments: {} },
        undefined,
        { onprogress: () => undefined },
      );
      expect(withProgress.isError).toBeFalsy();
      expect(JSON.stringify(withProgress.content)).toContain('- Name: Ada');
      expect(asked).toEqual([
        'sampling/createMessage',
        'elicitation/create',
        'elicitation/create',
        'elicitation/create',
      ]);
      expect(since(from).map((r) => [r.provider, r.tool, r.outcome.split(':')[0]])).toEqual([
        ['everything', 'trigger-sampling-request', 'ok'],
        ['everything', 'trigger-elicitation-request', 'ok'],
        ['asks', 'confirm', 'ok'],
        ['everything', 'trigger-elicitation-request', 'ok'],
      ]);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
    // A session id /mcp did not seal for this agent is unknown: 404, as MCP says.
    const unknown = await fetch(url, {
      method: 'POST',
      headers: {
        ...headers(),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': `${session!.slice(0, -4)}AAAA`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(404);
    // A sealed session has nothing to end, and would still open after a DELETE: 405, as MCP allows.
    const ended = await fetch(url, { method: 'DELETE', headers: { ...headers(), 'mcp-session-id': session! } });
    expect(ended.status).toBe(405);
  });

  it.runIf(REDIS)(
    'a 2025 client’s answer to a provider’s request, POSTed to another instance, reaches the call (Redis)',
    async () => {
      const post = (at: string, body: unknown, session?: string) =>
        fetch(at, {
          method: 'POST',
          headers: {
            ...headers(),
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }),
          },
          body: JSON.stringify(body),
        });
      const init = await post(instanceUrls[0]!, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: { elicitation: {} },
          clientInfo: { name: 'raw', version: '1' },
        },
      });
      const session = init.headers.get('mcp-session-id')!;
      expect(session).toMatch(/^pss1\./);
      await init.body?.cancel();
      const from = receipts.length;
      const call = await post(
        instanceUrls[0]!,
        {
          jsonrpc: '2.0',
          id: 'far-ask',
          method: 'tools/call',
          params: { name: 'everything__trigger-elicitation-request', arguments: {} },
        },
        session,
      );
      expect(call.headers.get('content-type')).toContain('text/event-stream');
      const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      /** The next JSON-RPC message on the call's stream. */
      const next = async (): Promise<Record<string, any>> => {
        for (;;) {
          const end = text.indexOf('\n\n');
          if (end >= 0) {
            const event = text.slice(0, end);
            text = text.slice(end + 2);
            const data = event.split('\n').find((l) => l.startsWith('data: '));
            if (data) return JSON.parse(data.slice(6)) as Record<string, any>;
            continue;
          }
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended: ${text}`);
          text += value;
        }
      };
      const asked = await next();
      expect(asked).toMatchObject({ method: 'elicitation/create', id: expect.stringMatching(/^plaza-input-/) });
      const answer = await post(
        instanceUrls[1]!,
        { jsonrpc: '2.0', id: asked['id'], result: { action: 'accept', content: { name: 'Far' } } },
        session,
      );
      expect(answer.status).toBe(202);
      const result = await next();
      expect(result).toMatchObject({ id: 'far-ask', result: { content: expect.any(Array) } });
      expect(JSON.stringify(result['result'].content)).toContain('- Name: Far');
      await until('the receipt', () => since(from).length === 1);
      expect(since(from)[0]).toMatchObject({
        provider: 'everything',
        tool: 'trigger-elicitation-request',
        status: 'ok',
      });
    },
  );

  it('relays a provider’s -32021 (a capability the 2026-07-28 client did not declare) as that JSON-RPC error with HTTP 400, receipted as an error', async () => {
    const client = await v2({ pin: MODERN });
    const from = receipts.length;
    try {
      const refusal = await client.callTool({ name: 'strict__sample', arguments: {} }).then(
        () => undefined,
        (error: unknown) => error as { code?: number; data?: unknown },
      );
      expect(refusal).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
      expect(since(from)).toEqual([expect.objectContaining({ status: 'error', tool: 'sample' })]);
    } finally {
      await client.close();
    }
    // On the wire: HTTP 400, as MCP 2026-07-28 has it for -32021.
    const raw = await rawModernCall(7, 'strict__sample', { arguments: {} });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ id: 7, error: { code: -32021 } });
  });

  it('checks a 2026-07-28 call’s Mcp-Param-* headers against the tool’s x-mcp-header schema and sends the provider its own', async () => {
    const client = await v2({ pin: MODERN });
    try {
      // The SDK v2 client mirrors the argument in Mcp-Param-Region from the listed schema.
      await client.listTools();
      const result = await client.callTool({ name: 'strict__region', arguments: { region: 'eu-west' } });
      expect(result.content).toEqual([{ type: 'text', text: 'in eu-west' }]);
      expect(roundTrip.regionHeaders).toEqual(['eu-west']);
    } finally {
      await client.close();
    }
    const call = (header: Record<string, string>) =>
      rawModernCall(5, 'strict__region', { arguments: { region: 'Hello' } }, {}, header);
    // Base64 of the value is the value; a literal is taken as written.
    expect((await call({ 'mcp-param-region': '=?base64?SGVsbG8=?=' })).status).toBe(200);
    for (const header of [{ 'mcp-param-region': 'Bye' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' }, {}] as Record<
      string,
      string
    >[]) {
      const refused = await call(header);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ id: 5, error: { code: -32020 } });
    }
    // Refused before anything was called: only the two accepted calls reached the provider.
    expect(roundTrip.regionHeaders).toEqual(['eu-west', 'Hello']);
  });

  it('a client pinned to 2026-07-28 lists and calls every tool, resource and prompt of a 2026-only provider (SDK v2, legacy: reject)', async () => {
    const client = await v2({ pin: MODERN });
    try {
      const seenFrom = only.seen.length;
      const from = receipts.length;
      const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('only__'));
      expect(names).toEqual(['only__echo']);
      const echoed = await client.callTool({ name: 'only__echo', arguments: { text: 'stateless' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'v2 echo: stateless' }]);

      const resources = (await client.listResources()).resources.filter((r) => r.uri.startsWith('plaza+only:'));
      expect(resources.map((r) => r.uri)).toEqual(['plaza+only:v2://notes/first']);
      const read = await client.readResource({ uri: 'plaza+only:v2://notes/first' });
      expect(read.contents[0]?.uri).toBe('plaza+only:v2://notes/first');
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((tp) => tp.uriTemplate);
      expect(templates).toContain('plaza+only:v2://notes/{id}');
      const byTemplate = await client.readResource({ uri: 'plaza+only:v2://notes/7' });
      expect(byTemplate.contents).toEqual([
        { uri: 'plaza+only:v2://notes/7', mimeType: 'text/plain', text: 'note at v2://notes/7' },
      ]);

      const prompts = (await client.listPrompts()).prompts.filter((p) => p.name.startsWith('only__'));
      expect(prompts.map((p) => p.name)).toEqual(['only__greet']);
      const greeting = await client.getPrompt({ name: 'only__greet', arguments: { name: 'Ada' } });
      expect(greeting.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Hello, Ada!' } }]);
      const completed = await client.complete({
        ref: { type: 'ref/prompt', name: 'only__greet' },
        argument: { name: 'name', value: 'A' },
      });
      expect(completed.completion.values).toEqual(['Ada', 'Alan']);

      // One receipt for the call, each read and the prompt.
      expect(
        since(from)
          .filter((r) => r.provider === 'only')
          .map((r) => [r.tool, r.status]),
      ).toEqual([
        ['echo', 'ok'],
        ['resources/read', 'ok'],
        ['resources/read', 'ok'],
        ['prompts/get', 'ok'],
      ]);
      // The provider was spoken to in its own revision: no initialize, the revision's header on
      // every request, and the agent's card on each one that carries _meta.
      const seen = only.seen.slice(seenFrom);
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.some((s) => s.method === 'initialize')).toBe(false);
      expect(seen.every((s) => s.headers['mcp-protocol-version'] === MODERN && s.status === 200)).toBe(true);
      const call = seen.find((s) => s.method === 'tools/call');
      expect((call?.meta?.['platform'] as { display_name?: string } | undefined)?.display_name).toBe('Newcomer');
    } finally {
      await client.close();
    }
  }, 60_000);
});
