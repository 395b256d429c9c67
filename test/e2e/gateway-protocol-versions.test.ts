/**
 * The gateway between peers of different MCP protocol versions, with providers written by hand as
 * servers in the wild behave: what a client gets through it must be what MCP has it expect of a
 * server, and a provider must be spoken to in the version it agreed to.
 * - `/mcp/p/<provider>` with a 2025-03-26 provider that takes notifications and responses with a
 *   200 and no body (MCP asks for 202); a client of that version sends no MCP-Protocol-Version.
 * - `/mcp` with a provider that supports up to 2025-06-18 and checks MCP-Protocol-Version on every
 *   POST, initialize included (as the Go SDK's server does), called by the SDK's own client, which
 *   negotiates 2025-11-25 with `/mcp`.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAggregate, createPassthrough, createSessionSealer, createUpstreamPool } from '../../gateway/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';

describe('/mcp/p/<provider> with a 2025-03-26 provider that answers notifications 200', () => {
  let t: TestDatabase;
  let gateway: Server;
  let upstream: Server;
  let url = '';
  let token = '';
  /** The bodies the provider received. */
  const received: unknown[] = [];

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const { agents, ...agent } = await createTestAgent(t.db.prisma, 'old@example.com', {
      display_name: 'Old client',
      owner_context: 'acme',
    });
    token = agent.token;
    upstream = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const body = JSON.parse(text) as unknown;
      received.push(body);
      const messages = (Array.isArray(body) ? body : [body]) as { id?: unknown; method?: string }[];
      const requests = messages.filter((m) => m.method !== undefined && m.id !== undefined);
      if (requests.length === 0) {
        res.writeHead(200, { 'mcp-session-id': 'old-session' }).end();
        return;
      }
      const answers = requests.map((m) =>
        m.method === 'initialize'
          ? {
              jsonrpc: '2.0',
              id: m.id,
              result: {
                protocolVersion: '2025-03-26',
                capabilities: { tools: {} },
                serverInfo: { name: 'old', version: '1' },
              },
            }
          : { jsonrpc: '2.0', id: m.id, result: {} },
      );
      res
        .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'old-session' })
        .end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const connector = {
      provider: 'old',
      url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`,
      endpointId: 'ep_old',
    };
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const passthrough = createPassthrough({
      agents,
      receipts: { record: async () => undefined },
      assertionKey: async () => ({ kid: 'assert-1', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
      directory: { byProvider: async (p) => (p === 'old' ? connector : undefined) },
      sealer: createSessionSealer(randomBytes(32)),
    });
    gateway = createServer((req, res) => void passthrough(req, res, 'old'));
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/mcp/p/old`;
  }, 60_000);

  afterAll(async () => {
    await new Promise((r) => gateway?.close(r));
    await new Promise((r) => upstream?.close(r));
    await t?.dispose();
  });

  /** A POST as a 2025-03-26 client sends it: no MCP-Protocol-Version header. */
  const post = (body: unknown, session?: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body: JSON.stringify(body),
    });

  it.each([
    ['notifications/initialized', { jsonrpc: '2.0', method: 'notifications/initialized' }],
    ['a response to the provider', { jsonrpc: '2.0', id: 'srv-1', result: {} }],
    [
      'a batch of notifications',
      [
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      ],
    ],
  ])(
    'answers %s 202 with no body, as MCP asks, when the provider took it with 200 and no body',
    async (_name, message) => {
      const init = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old-client', version: '1' } },
      });
      expect(init.status).toBe(200);
      expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(
        '2025-03-26',
      );
      const session = init.headers.get('mcp-session-id') ?? undefined;
      expect(session).toBeTruthy();
      const before = received.length;
      const answer = await post(message, session);
      expect(await answer.text()).toBe('');
      expect(answer.status).toBe(202);
      expect(received.length).toBe(before + 1);
      // The session goes on: a request after it is answered.
      const ping = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, session);
      expect(ping.status).toBe(200);
      expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    },
  );

  it('still answers a request the provider answered with no body as failed, under its id', async () => {
    // A request is owed an answer: an empty body is no answer to it (the 202 above is for notifications only).
    upstream.removeAllListeners('request');
    upstream.on('request', (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    const answer = await post({ jsonrpc: '2.0', id: 7, method: 'ping' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32603, message: 'Upstream failed: the upstream answered malformed JSON.' },
    });
  });
});

describe('/mcp with a provider that checks MCP-Protocol-Version on every POST', () => {
  let t: TestDatabase;
  let gateway: Server;
  let upstream: Server;
  let url = '';
  let token = '';
  /** The MCP-Protocol-Version of each POST the provider received, by method. */
  const seen: { method: string; version: string | undefined }[] = [];
  const SUPPORTED = ['2025-06-18', '2025-03-26', '2024-11-05'];

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const { agents, ...agent } = await createTestAgent(t.db.prisma, 'strict@example.com', {
      display_name: 'New client',
      owner_context: 'acme',
    });
    token = agent.token;
    upstream = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const message = JSON.parse(text) as { id?: unknown; method?: string; params?: { protocolVersion?: string } };
      const header = req.headers['mcp-protocol-version'];
      seen.push({ method: String(message.method), version: typeof header === 'string' ? header : undefined });
      // As the Go SDK's handler: no header is 2025-03-26; an unsupported one is refused, initialize or not.
      if (!SUPPORTED.includes(typeof header === 'string' ? header : '2025-03-26')) {
        res
          .writeHead(400, { 'content-type': 'text/plain' })
          .end(`Bad Request: Unsupported protocol version (supported versions: ${SUPPORTED.join(',')})`);
        return;
      }
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const asked = message.params?.protocolVersion ?? '';
      const result =
        message.method === 'initialize'
          ? {
              protocolVersion: SUPPORTED.includes(asked) ? asked : SUPPORTED[0],
              capabilities: { tools: {} },
              serverInfo: { name: 'strict', version: '1' },
            }
          : { content: [{ type: 'text', text: 'strict ok' }] };
      res
        .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'strict-session' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const connector = {
      provider: 'strict',
      url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`,
      endpointId: 'ep_strict',
    };
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const aggregate = createAggregate({
      agents,
      receipts: { record: async () => undefined },
      assertionKey: async () => ({ kid: 'assert-1', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
      catalog: {
        onlineTools: async () => [
          { provider: 'strict', name: 'echo', description: 'echo', inputSchema: { type: 'object' }, annotations: {} },
        ],
        byProvider: async (p) => (p === 'strict' ? connector : undefined),
        needsCredential: async () => false,
      },
      pool: createUpstreamPool({ timeoutMs: 10_000 }),
    });
    gateway = createServer((req, res) => void aggregate(req, res));
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/mcp`;
  }, 60_000);

  afterAll(async () => {
    await new Promise((r) => gateway?.close(r));
    await new Promise((r) => upstream?.close(r));
    await t?.dispose();
  });

  it('calls the tool for a 2025-11-25 client, in the version the provider agreed to', async () => {
    const client = new Client({ name: 'new-client', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const result = await client.callTool({ name: 'strict__echo', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual([{ type: 'text', text: 'strict ok' }]);
    } finally {
      await client.close();
    }
    // The pooled session was opened without the caller's version and then spoke the agreed one.
    expect(seen.find((s) => s.method === 'initialize')?.version).toBeUndefined();
    expect(seen.filter((s) => s.method !== 'initialize').map((s) => s.version)).toEqual(['2025-06-18', '2025-06-18']);
  });
});
