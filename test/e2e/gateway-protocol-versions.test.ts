/**
 * The passthrough with a provider of MCP 2025-03-26 written by hand, as older servers in the wild
 * are: it takes notifications and responses with a 200 and no body (MCP asks for 202) and answers
 * batches. A client of that version sends no MCP-Protocol-Version header. What such a client
 * gets through `/mcp/p/<provider>` must be what MCP has it expect of a server.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createPassthrough, createSessionSealer } from '../../gateway/index.ts';
import { createAccountService } from '../../src/accounts/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
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
    const account = await createAccountService({ prisma: t.db.prisma, clock: systemClock }).createAccount({ email: 'old@example.com' });
    const agents = createAgentService({ prisma: t.db.prisma, clock: systemClock });
    token = (await agents.create(account.account.id, { display_name: 'Old client', owner_context: 'acme' })).token;
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
          ? { jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-03-26', capabilities: { tools: {} }, serverInfo: { name: 'old', version: '1' } } }
          : { jsonrpc: '2.0', id: m.id, result: {} },
      );
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'old-session' }).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const connector = { provider: 'old', url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`, endpointId: 'ep_old' };
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
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session ? { 'mcp-session-id': session } : {}) },
      body: JSON.stringify(body),
    });

  it.each([
    ['notifications/initialized', { jsonrpc: '2.0', method: 'notifications/initialized' }],
    ['a response to the provider', { jsonrpc: '2.0', id: 'srv-1', result: {} }],
    ['a batch of notifications', [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }]],
  ])('answers %s 202 with no body, as MCP asks, when the provider took it with 200 and no body', async (_name, message) => {
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old-client', version: '1' } } });
    expect(init.status).toBe(200);
    expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe('2025-03-26');
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
  });

  it('still answers a request the provider answered with no body as failed, under its id', async () => {
    // A request is owed an answer: an empty body is no answer to it (the 202 above is for notifications only).
    upstream.removeAllListeners('request');
    upstream.on('request', (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    const answer = await post({ jsonrpc: '2.0', id: 7, method: 'ping' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'Upstream failed: the upstream answered malformed JSON.' } });
  });
});
