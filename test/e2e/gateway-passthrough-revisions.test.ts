/**
 * `/mcp/p/<provider>` between a client and a provider that share no MCP revision (issue 33, item 2),
 * each provider listed and probed as Plaza lists any:
 * - an SDK v1 client (2025) to an SDK v2 provider that speaks only 2026-07-28: Plaza answers
 *   initialize with a sealed session and sends each request stateless, the envelope built from the
 *   client's initialize; list (every page), call, receipt;
 * - an SDK v2 client pinned to 2026-07-28 to an SDK v1 provider with sessions and to
 *   server-everything: Plaza answers server/discover from their initialize, results carry
 *   `resultType: "complete"`; list, call, progress, receipt; a provider's request to its client
 *   (sampling) is refused in-band at once.
 * Runs on PGlite and, when TEST_DATABASE_URL is set, PostgreSQL.
 */
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Client as ClientV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { awaitHealthy } from '../support/endpoints.ts';
import { apiJson } from '../support/gateway-load.ts';
import {
  type EverythingServer,
  type SdkUpstream,
  startEverything,
  startSdkUpstream,
} from '../support/mcp-upstreams.ts';
import { connectV2 } from '../support/mcp-v2-client.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { inclusionVerifies } from '../support/receipts.ts';
import { type SdkV2Upstream, startSdkV2HeaderUpstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

const ENV = { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0' };

/**
 * A 2025-06-18 provider by hand, with sessions and a GET notification stream per session: `change()`
 * sends `notifications/tools/list_changed` (and a log message, which no subscription asks for) on
 * every open stream. It records its sessions' requests.
 */
async function startNotifier() {
  const streams = new Set<ServerResponse>();
  const seen: { method: string; session: string | undefined }[] = [];
  const server = createServer(async (req, res) => {
    const session = req.headers['mcp-session-id'] as string | undefined;
    if (req.method === 'GET') {
      seen.push({ method: 'GET', session });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      streams.add(res);
      res.on('close', () => streams.delete(res));
      return;
    }
    if (req.method === 'DELETE') {
      seen.push({ method: 'DELETE', session });
      return void res.writeHead(200).end();
    }
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const message = JSON.parse(raw) as { id?: unknown; method: string; params?: { protocolVersion?: string } };
    seen.push({ method: message.method, session });
    if (message.id === undefined) return void res.writeHead(202).end();
    const answer = (body: unknown) =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': session ?? `s-${seen.length}` })
        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...(body as object) }));
    if (message.method === 'initialize')
      return answer({
        result: {
          protocolVersion: '2025-06-18',
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: 'notifier', version: '1' },
        },
      });
    if (message.method === 'tools/list')
      return answer({ result: { tools: [{ name: 'noop', inputSchema: { type: 'object' } }] } });
    return answer({ error: { code: -32601, message: 'Method not found' } });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    seen,
    open: () => streams.size,
    change() {
      for (const stream of streams) {
        stream.write(
          `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } })}\n\n`,
        );
        stream.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.each(BACKENDS)('/mcp/p/<provider> across revisions, on %s', (backend) => {
  let plaza: TestPlaza;
  let weather: SdkV2Upstream;
  let v1: SdkUpstream;
  let everything: EverythingServer;
  let geo: SdkV2Upstream;
  let notifier: Awaited<ReturnType<typeof startNotifier>>;
  let apiKey = '';
  let token = '';
  let aginId = '';

  const json = (path: string, init?: RequestInit) => apiJson(plaza.url, apiKey, path, init);

  beforeAll(async () => {
    [plaza, weather, v1, everything, geo, notifier] = await Promise.all([
      startTestPlaza(backend, { env: ENV }),
      startSdkV2Upstream({
        legacy: 'reject',
        pages: [[{ name: 'forecast', description: 'Tomorrow.' }], [{ name: 'alerts', description: 'Warnings.' }]],
      }),
      startSdkUpstream(),
      startEverything(),
      startSdkV2HeaderUpstream(),
      startNotifier(),
    ]);
    apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'bridge@example.com',
      })
    ).apiKey;
    const listings = {
      weather: weather.url,
      'sdk-v1': v1.url,
      everything: everything.url,
      geo: geo.url,
      notifier: notifier.url,
    };
    for (const [provider, url] of Object.entries(listings)) {
      const listed = await json('/api/mcp/listings', {
        method: 'POST',
        body: JSON.stringify({ provider, url, registered_by: 'ops@example.com', summary: `${provider} server` }),
      });
      expect(listed.status).toBe(201);
      const endpoint = await awaitHealthy(plaza.url, listed.body.id, { tries: 200, everyMs: 50 });
      expect(endpoint.status, provider).toBe('healthy');
    }
    const agent = await json('/api/agents', {
      method: 'POST',
      body: JSON.stringify({ display_name: 'Bridge agent', owner_context: 'acme' }),
    });
    token = agent.body.data.token;
    aginId = agent.body.data.agent.agin_id;
  }, 90_000);
  afterAll(async () => {
    await Promise.all([
      plaza?.close(),
      weather?.close(),
      v1?.close(),
      everything?.stop(),
      geo?.close(),
      notifier?.close(),
    ]);
  });

  const headers = () => ({ authorization: `Bearer ${token}` });

  /** The receipt of `callId`: ok, for `provider`'s `tool`, with an inclusion proof that verifies. */
  async function expectVerifiedReceipt(callId: string, provider: string, tool: string): Promise<void> {
    const { status, body } = await json(`/api/receipts/${callId}`);
    expect(status).toBe(200);
    const { receipt, inclusion, checkpoint } = body.data;
    expect(receipt).toMatchObject({ call_id: callId, agin_id: aginId, provider, tool, status: 'ok' });
    expect(inclusionVerifies({ receipt, inclusion, checkpoint })).toBe(true);
  }

  /** An SDK v2 client pinned to 2026-07-28 on `/mcp/p/<provider>`. */
  async function pinned(provider: string): Promise<ClientV2> {
    return connectV2(`${plaza.url}/mcp/p/${provider}`, token, {
      name: 'v2-pinned',
      capabilities: { sampling: {} },
      setup: (client) =>
        client.setRequestHandler('sampling/createMessage', async () => ({
          model: 'test-model',
          role: 'assistant' as const,
          content: { type: 'text' as const, text: 'sampled' },
        })),
    });
  }

  it('takes an SDK v1 client to a provider that speaks only 2026-07-28: initialize, every page of tools, a call with its receipt', async () => {
    const client = new Client(
      { name: 'v1-agent', version: '7' },
      { capabilities: { roots: { listChanged: true }, elicitation: {} } },
    );
    const elicited: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params.message);
      return { action: 'accept', content: { ok: true } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp/p/weather`), { requestInit: { headers: headers() } }),
    );
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'sdk-v2-upstream' });
      expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true } });
      const first = await client.listTools();
      expect(first.tools.map((t) => t.name)).toEqual(['forecast']);
      const second = await client.listTools({ cursor: first.nextCursor! });
      expect(second.tools.map((t) => t.name)).toEqual(['alerts']);
      expect((second as Record<string, unknown>)['resultType']).toBeUndefined();
      const result = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual([{ type: 'text', text: 'forecast {"city":"Oslo"}' }]);
      expect((result as Record<string, unknown>)['resultType']).toBeUndefined();
      const callId = (result._meta as any).platform.call_id as string;
      // Stateless upstream: the envelope from the client's initialize, the AGIN card, no session.
      const seen = weather.seen.find((s) => (s.meta?.['platform'] as any)?.call_id === callId)!;
      expect(seen.status).toBe(200);
      expect(seen.headers['mcp-session-id']).toBeUndefined();
      expect(seen.headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-name': 'forecast' });
      expect(seen.meta).toMatchObject({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { roots: { listChanged: true }, elicitation: {} },
        platform: { agin_id: aginId, call_id: callId },
      });
      await expectVerifiedReceipt(callId, 'weather', 'forecast');
      // An input_required round with state only: asked again at once, one receipt for the call.
      const asked = await client.callTool({ name: 'ask', arguments: {} });
      expect(asked.isError).toBeFalsy();
      expect(asked.content).toEqual([{ type: 'text', text: 'ask {}' }]);
      const retried = weather.seen.filter((s) => s.method === 'tools/call' && s.params?.['name'] === 'ask');
      expect(retried.map((s) => s.params?.['requestState'])).toEqual([undefined, 'ask-1']);
      await expectVerifiedReceipt((asked._meta as any).platform.call_id, 'weather', 'ask');
      // The provider's elicitation is asked of the client on the call's stream, its answer sent back.
      const confirmed = await client.callTool({ name: 'confirm', arguments: {} });
      expect(confirmed.content).toEqual([{ type: 'text', text: 'confirmed true' }]);
      expect(elicited).toEqual(['Go ahead?']);
      const retry = weather.seen.filter((s) => s.params?.['name'] === 'confirm').at(-1)!;
      expect(retry.params).toMatchObject({
        requestState: 'confirm-1',
        inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
      });
      // The client's GET stream is the provider's subscriptions/listen: a list change reaches it.
      const changed = new Promise<void>((resolve) =>
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
      );
      for (let i = 0; i < 200 && !weather.seen.some((s) => s.method === 'subscriptions/listen'); i++)
        await new Promise((r) => setTimeout(r, 25));
      const listen = weather.seen.find((s) => s.method === 'subscriptions/listen')!;
      expect(listen.status).toBe(200);
      expect(listen.params?.['notifications']).toMatchObject({ toolsListChanged: true });
      expect(listen.meta).toMatchObject({ 'io.modelcontextprotocol/clientInfo': { name: 'plaza-gateway' } });
      // The provider holds the subscription once it answered it: a change published now is on its way.
      weather.notify.toolsChanged();
      await changed;
    } finally {
      await client.close();
    }
    expect(
      weather.seen.filter((s) => s.method === 'initialize').map((s) => (s.params?.['clientInfo'] as any)?.name),
    ).toEqual(['plaza-prober']);
  });

  it('takes an SDK v2 client pinned to 2026-07-28 to an SDK v1 provider with sessions: list, call, progress, receipt', async () => {
    const client = await pinned('sdk-v1');
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'sdk-upstream' });
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
      const echoed = await client.callTool({ name: 'echo', arguments: { message: 'across' } });
      expect(echoed.isError).toBeFalsy();
      expect(JSON.stringify(echoed.content)).toContain('across');
      const callId = (echoed._meta as any).platform.call_id as string;
      await expectVerifiedReceipt(callId, 'sdk-v1', 'echo');
      // `ask` sends progress (asked for) and then a ping to its client, which Plaza answers itself.
      const progress: number[] = [];
      const asked = await client.callTool(
        { name: 'ask', arguments: { method: 'ping' } },
        {
          onprogress: (p) => progress.push(p.progress),
        },
      );
      expect(asked.isError).toBeFalsy();
      expect(progress.length).toBeGreaterThan(0);
      // The provider's sampling request reaches the client as an input_required round, its answer the provider.
      const sampled = await client.callTool({ name: 'ask', arguments: { method: 'sampling/createMessage' } });
      expect(sampled.isError).toBeFalsy();
      expect(JSON.stringify(sampled.content)).toContain('sampling/createMessage answered');
      expect(JSON.stringify(sampled.content)).toContain('sampled');
      await expectVerifiedReceipt((sampled._meta as any).platform.call_id, 'sdk-v1', 'ask');
    } finally {
      await client.close();
    }
    // The provider's session declared the client's capabilities.
    const inits = v1.seen.filter(
      (s) => s.body?.method === 'initialize' && s.body.params.clientInfo.name === 'plaza-gateway',
    );
    expect(inits.map((s) => s.body.params.capabilities)).toContainEqual({ sampling: {} });
  });

  it('takes an SDK v2 client pinned to 2026-07-28 to server-everything: list, call, progress, receipt', async () => {
    const client = await pinned('everything');
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
      const echoed = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
      expect(JSON.stringify(echoed.content)).toContain('hello');
      await expectVerifiedReceipt((echoed._meta as any).platform.call_id, 'everything', 'echo');
      const progress: number[] = [];
      const long = await client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(long.isError).toBeFalsy();
      expect(progress).toEqual([1, 2, 3]);
      const sampled = await client.callTool({
        name: 'trigger-sampling-request',
        arguments: { prompt: 'hi', maxTokens: 20 },
      });
      expect(JSON.stringify(sampled.content)).toContain('sampled');
    } finally {
      await client.close();
    }
  });
  it('answers what it cannot bridge with a clear 4xx, and what needs no upstream itself', async () => {
    const post = (provider: string, body: unknown, extra: Record<string, string> = {}) =>
      fetch(`${plaza.url}/mcp/p/${provider}`, {
        method: 'POST',
        headers: {
          ...headers(),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...extra,
        },
        body: JSON.stringify(body),
      });
    const modern = { 'mcp-protocol-version': '2026-07-28' };
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const batch = await post(
      'sdk-v1',
      [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }],
      modern,
    );
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as any).error.message).toContain('one JSON-RPC message per POST');
    const mismatch = await post(
      'sdk-v1',
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } },
      { ...modern, 'mcp-method': 'tools/call' },
    );
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toMatchObject({ id: 2, error: { message: expect.stringContaining('Mcp-Method') } });
    const get = await fetch(`${plaza.url}/mcp/p/sdk-v1`, { headers: { ...headers(), ...modern } });
    expect(get.status).toBe(405);
    // A 2025 client's ping, notification and DELETE are Plaza's to answer: the provider has no session.
    const before = weather.seen.length;
    const ping = await post('weather', { jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    expect((await post('weather', { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    const ended = await fetch(`${plaza.url}/mcp/p/weather`, { method: 'DELETE', headers: headers() });
    expect(ended.status).toBe(200);
    expect(weather.seen.length).toBe(before);
    const notJson = await fetch(`${plaza.url}/mcp/p/weather`, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
  });
  it("calls a 2026-only tool whose schema asks for Mcp-Param-* headers for an SDK v1 client, reading the schema from the provider's tools/list", async () => {
    const client = new Client({ name: 'v1-agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp/p/geo`), { requestInit: { headers: headers() } }),
    );
    try {
      for (const region of ['eu-west', 'Zürich']) {
        const result = await client.callTool({ name: 'geo', arguments: { region, n: 1 } });
        expect(result.isError, region).toBeFalsy();
        expect(result.content).toEqual([{ type: 'text', text: JSON.stringify({ region, n: 1 }) }]);
        await expectVerifiedReceipt((result._meta as any).platform.call_id, 'geo', 'geo');
      }
    } finally {
      await client.close();
    }
    const calls = geo.seen.filter((s) => s.method === 'tools/call');
    // The first call was refused for the missing header, then asked again with it; the second had it at once.
    expect(calls.map((s) => s.status)).toEqual([400, 200, 200]);
    expect(calls[2]!.headers['mcp-param-region']).toBe(`=?base64?${Buffer.from('Zürich').toString('base64')}?=`);
  });
  it("passes on, under the client's id, a provider's refusal to ask a 2025 client for input it did not declare (-32021)", async () => {
    const client = new Client({ name: 'plain-agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp/p/weather`), { requestInit: { headers: headers() } }),
    );
    try {
      await expect(client.callTool({ name: 'confirm', arguments: {} })).rejects.toMatchObject({ code: -32021 });
    } finally {
      await client.close();
    }
  });
  it("cancels a 2025 client's request to a 2026-only provider: the stream upstream is closed, the receipt says so", async () => {
    const client = new Client({ name: 'cancelling', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp/p/weather`), { requestInit: { headers: headers() } }),
    );
    try {
      const stop = new AbortController();
      const call = client.callTool({ name: 'slow', arguments: { ms: 30_000 } }, undefined, { signal: stop.signal });
      for (let i = 0; i < 200 && weather.slow.started === 0; i++) await new Promise((r) => setTimeout(r, 25));
      stop.abort();
      await expect(call).rejects.toThrow();
      for (let i = 0; i < 200 && weather.slow.aborted === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(weather.slow).toEqual({ started: 1, aborted: 1, done: 0 });
      const seen = weather.seen.find((s) => s.params?.['name'] === 'slow')!;
      const callId = (seen.meta?.['platform'] as { call_id: string }).call_id;
      let receipt: any;
      for (let i = 0; i < 200 && receipt === undefined; i++) {
        const found = await json(`/api/receipts/${callId}`);
        if (found.status === 200) receipt = found.body.data.receipt;
        else await new Promise((r) => setTimeout(r, 25));
      }
      expect(receipt).toMatchObject({ status: 'error', tool: 'slow' });
      // Its notifications/cancelled found the request (not only a connection that went away).
      expect(receipt.outcome).toBe('upstream failure: the caller cancelled the call');
    } finally {
      await client.close();
    }
  });
  it("relays a 2025 provider's list changes to a 2026-07-28 client's subscriptions/listen, in a session of its own", async () => {
    const client = await pinned('notifier');
    try {
      const changed = new Promise<void>((resolve) =>
        client.setNotificationHandler('notifications/tools/list_changed', () => resolve()),
      );
      const subscription = await client.listen({ toolsListChanged: true, promptsListChanged: true });
      // Only what the provider offers is honored.
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      expect(notifier.open()).toBe(1);
      notifier.change();
      await changed;
      await subscription.close();
      for (let i = 0; i < 200 && notifier.seen.at(-1)?.method !== 'DELETE'; i++)
        await new Promise((r) => setTimeout(r, 25));
      // The listen's own session: opened for it, its GET stream, ended with it.
      const get = notifier.seen.find((s) => s.method === 'GET')!;
      expect(get.session).toBeDefined();
      expect(notifier.seen.at(-1)).toEqual({ method: 'DELETE', session: get.session });
    } finally {
      await client.close();
    }
  });
});
