/**
 * The passthrough gateway (`/mcp/p/<provider>`) against real peers: the official MCP SDK client as
 * the agent and `@modelcontextprotocol/server-everything` as the upstream. Pins identity stamping
 * on calls and results, receipts per call, progress and sampling passing through, sealed sessions,
 * what a provider receives (recording upstream, assertion verified against the JWKS), and upstream
 * failures answered in-band as error results with an error receipt. The caller's claims of where a
 * request came from (X-Forwarded-For and the like) and the headers its Connection names stop here.
 */
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, request as httpRequest } from 'node:http';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ProgressNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createLocalJWKSet, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  type CallReceipt,
  type CatalogTool,
  type Connector,
  createAggregate,
  createPassthrough,
  createSessionSealer,
  createUpstreamPool,
  verifyAssertion,
} from '../../gateway/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { freePort } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { postMcp } from '../support/json-rpc.ts';
import { listen, type Listening } from '../support/listen.ts';
import { type EverythingServer, startEverything } from '../support/mcp-upstreams.ts';
import { sendRawHttp } from '../support/raw-http.ts';

interface Recorded {
  headers: IncomingMessage['headers'];
  body: any;
}

describe('gateway passthrough /mcp/p/<provider>', () => {
  let t: TestDatabase;
  let everything: EverythingServer;
  let gateway: Listening;
  let recorder: Listening;
  let streamer: Listening;
  const recorded: Recorded[] = [];
  const receipts: CallReceipt[] = [];
  let token = '';
  let aginId = '';
  let keys: ReturnType<typeof createLocalJWKSet>;
  const connectors = new Map<string, Connector>();

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const { agents, ...created } = await createTestAgent(t.db.prisma, 'ops@example.com', {
      display_name: 'Gateway test agent',
      owner_context: 'acme',
    });
    token = created.token;
    aginId = created.agent.agin_id;
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'assert-1', alg: 'EdDSA' }] });

    everything = await startEverything();
    recorder = await listen(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const body = JSON.parse(text);
      recorded.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: body.id,
          result: {
            content: [{ type: 'text', text: 'recorded' }],
            isError: false,
            _meta: { platform: { agin_id: 'upstream-says' } },
          },
        }),
      );
    });
    // Answers every POST as an event stream: `slow` sends a notification, the answer 30 ms later
    // and closes the stream only 3 s after that; `quick` sends the answer and ends at once.
    streamer = await listen(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const body = JSON.parse(text);
      const answer = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { content: [{ type: 'text', text: 'streamed' }] } })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url === '/quick') {
        res.end(answer);
        return;
      }
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } })}\n\n`,
      );
      setTimeout(() => res.write(answer), 30);
      setTimeout(() => res.end(), 3_000);
    });
    connectors.set('slow-close', { provider: 'slow-close', url: `${streamer.url}/slow`, endpointId: 'ep_slow' });
    connectors.set('quick', { provider: 'quick', url: `${streamer.url}/quick`, endpointId: 'ep_quick' });
    connectors.set('everything', { provider: 'everything', url: everything.url, endpointId: 'ep_everything' });
    connectors.set('recorder', { provider: 'recorder', url: recorder.url, endpointId: 'ep_recorder' });
    connectors.set('dead', {
      provider: 'dead',
      url: `http://127.0.0.1:${await freePort()}/mcp`,
      endpointId: 'ep_dead',
    });

    const handle = createPassthrough({
      directory: { byProvider: async (p) => connectors.get(p) },
      agents,
      receipts: { record: async (r) => void receipts.push(r) },
      sealer: createSessionSealer(randomBytes(32)),
      assertionKey: async () => ({ kid: 'assert-1', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
      upstreamTimeoutMs: 5_000,
    });
    const catalogTools: CatalogTool[] = [];
    const aggregate = createAggregate({
      catalog: {
        onlineTools: async () => catalogTools,
        byProvider: async (p) => connectors.get(p),
        needsCredential: async () => false,
      },
      agents,
      receipts: { record: async (r) => void receipts.push(r) },
      pool: createUpstreamPool({ timeoutMs: 5_000 }),
      assertionKey: async () => ({ kid: 'assert-1', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
    });
    const lister = new Client({ name: 'lister', version: '1' });
    await lister.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
    for (const tool of (await lister.listTools()).tools) {
      catalogTools.push({
        provider: 'everything',
        name: tool.name,
        description: tool.description ?? '',
        inputSchema: tool.inputSchema,
        annotations: {},
      });
    }
    await lister.close();
    catalogTools.push({
      provider: 'dead',
      name: 'ghost',
      description: 'unreachable',
      inputSchema: { type: 'object' },
      annotations: {},
    });
    gateway = await listen((req, res) => {
      if (req.url === '/mcp') {
        aggregate(req, res).catch((error: unknown) => res.writeHead(500).end(String(error)));
        return;
      }
      const match = /^\/mcp\/p\/([a-z0-9-]+)$/.exec(req.url ?? '');
      if (!match?.[1]) {
        res.writeHead(404).end();
        return;
      }
      handle(req, res, match[1]).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
  }, 60_000);

  afterAll(async () => {
    await everything?.stop();
    gateway?.server.close();
    recorder?.server.close();
    streamer?.server.closeAllConnections();
    streamer?.server.close();
    await t?.dispose();
  });

  function client(provider: string, headers: Record<string, string> = {}) {
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/p/${provider}`), {
      requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
    });
    const c = new Client({ name: 'plaza-test-agent', version: '1.0.0' }, { capabilities: { sampling: {} } });
    return { c, transport };
  }

  it('lists and calls server-everything tools with AGIN identity and a receipt', async () => {
    const { c, transport } = client('everything');
    await c.connect(transport);
    expect(transport.sessionId).toMatch(/^pss1\./);
    const tools = await c.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain('echo');
    const before = receipts.length;
    const result = await c.callTool({ name: 'echo', arguments: { message: 'hello plaza' } });
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain('hello plaza');
    expect((result._meta as any)?.platform).toMatchObject({
      agin_id: aginId,
      call_id: expect.stringMatching(/^call_/),
      receipt_hint: expect.any(String),
    });
    expect(receipts.length).toBe(before + 1);
    expect(receipts.at(-1)).toMatchObject({
      aginId,
      tool: 'echo',
      provider: 'everything',
      status: 'ok',
      callId: (result._meta as any).platform.call_id,
    });
    await c.close();
  });

  it('passes progress notifications and sampling requests through', async () => {
    const { c, transport } = client('everything');
    c.setRequestHandler(CreateMessageRequestSchema, async () => ({
      model: 'test-model',
      role: 'assistant',
      content: { type: 'text', text: 'sampled answer' },
    }));
    await c.connect(transport);
    const progress: number[] = [];
    const long = await c.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      undefined,
      {
        onprogress: (p) => progress.push(p.progress),
      },
    );
    expect(long.isError).toBeFalsy();
    expect(progress).toEqual([1, 2, 3]);
    expect((long._meta as any)?.platform?.agin_id).toBe(aginId);
    const sampled = await c.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 20 } });
    expect(JSON.stringify(sampled.content)).toContain('sampled answer');
    void ProgressNotificationSchema;
    await c.close();
  });

  it('sends the provider the card, identity headers and a verifiable assertion; never the caller’s spoofs or Plaza token', async () => {
    recorded.length = 0;
    const res = await fetch(`${gateway.url}/mcp/p/recorder`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-platform-agin-id': 'spoofed',
        'x-platform-upstream-authorization': 'Bearer crm-token-123',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'crm.lookup', arguments: {}, _meta: { platform: { agin_id: 'spoofed' } } },
      }),
    });
    const answer: any = await res.json();
    const seen = recorded[0]!;
    const callId = seen.body.params._meta.platform.call_id as string;
    expect(seen.body.params._meta.platform).toMatchObject({
      agin_id: aginId,
      display_name: 'Gateway test agent',
      owner_context: 'acme',
    });
    expect(seen.headers['x-platform-agin-id']).toBe(aginId);
    expect(seen.headers['x-platform-call-id']).toBe(callId);
    expect(seen.headers['authorization']).toBe('Bearer crm-token-123');
    expect(JSON.stringify(seen.headers)).not.toContain(token);
    const claims = await verifyAssertion(String(seen.headers['x-platform-agin-assertion']), keys, {
      audience: recorder.url,
      issuer: 'http://plaza.test',
    });
    expect(claims).toMatchObject({ agin_id: aginId, call_id: callId });
    expect(answer.result._meta.platform).toMatchObject({ agin_id: aginId, call_id: callId });
    expect(JSON.stringify(receipts)).not.toContain('crm-token-123');
  });

  it('refuses what would reach the provider unreceipted or as another caller, and strips identity it did not stamp', async () => {
    recorded.length = 0;
    const receiptsBefore = receipts.length;
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      postMcp(`${gateway.url}/mcp/p/recorder`, token, body, headers);
    const forged = { platform: { agin_id: 'forged' } };
    const refused = [
      // A tools/call as a notification: no answer, so no receipt, and no stamp.
      { jsonrpc: '2.0', method: 'tools/call', params: { name: 'crm.lookup', _meta: forged } },
      // Two requests with one id: an answer to one could pass for the other's.
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'crm.lookup' } },
      ],
      // Tool names no receipt can hold.
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: '' } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'x'.repeat(301) } },
      // JSON nested deeper than the gateway walks.
      JSON.parse(
        `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a","arguments":{"a":${'['.repeat(300)}${']'.repeat(300)}}}}`,
      ),
    ];
    for (const body of refused) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(((await res.json()) as any).error.message).toMatch(/notification|unique|1 to 300|nests deeper/);
    }
    expect(recorded).toHaveLength(0);
    expect(receipts.length).toBe(receiptsBefore);

    const other = await post(
      {
        jsonrpc: '2.0',
        id: 5,
        method: 'resources/read',
        params: { uri: 'crm://x', _meta: { ...forged, progressToken: 9 } },
      },
      { x_platform_agin_id: 'forged' },
    );
    expect(other.status).toBe(200);
    expect(recorded[0]!.body.params._meta).toEqual({ progressToken: 9 });
    expect(recorded[0]!.headers['x_platform_agin_id']).toBeUndefined();
  });

  it("refuses member names that differ from MCP's only in case, which a case-insensitive provider would read instead", async () => {
    recorded.length = 0;
    const receiptsBefore = receipts.length;
    const other = { platform: { agin_id: 'someone-else', agent_principal: 'agent:someone-else' } };
    const variants: Array<[unknown, string]> = [
      // A ping to Plaza, a tools/call to a provider whose decoder takes the last of "method" and "Method".
      [
        { jsonrpc: '2.0', id: 1, method: 'ping', Method: 'tools/call', params: { name: 'delete_everything' } },
        'Method',
      ],
      // Receipted as echo, run as delete_everything.
      [{ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', Name: 'delete_everything' } }, 'Name'],
      // Another agent's card beside (and after) the one Plaza stamps.
      [{ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', _meta: {}, _META: other } }, '_META'],
      [
        {
          jsonrpc: '2.0',
          id: 4,
          method: 'tools/call',
          params: { name: 'echo', _meta: { platform: {}, PLATFORM: other.platform } },
        },
        'PLATFORM',
      ],
      [{ jsonrpc: '2.0', id: 5, method: 'resources/read', params: { uri: 'crm://x', _Meta: other } }, '_Meta'],
      [{ jsonrpc: '2.0', id: 6, method: 'ping', PARAMS: { name: 'delete_everything' } }, 'PARAMS'],
      // Unicode simple folding: the long s and the Kelvin sign are "s" and "k" to Go's encoding/json.
      [
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'echo', _meta: { progressToken: 1, progreſsToken: 2 } },
        },
        'progre\u017fsToken',
      ],
      [{ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', tasK: { ttl: 1 } } }, 'tas\u212a'],
      [{ jsonrpc: '2.0', id: 9, method: 'ping', ID: 10 }, 'ID'],
      // In a batch too.
      [
        [
          { jsonrpc: '2.0', id: 11, method: 'tools/list' },
          {
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken: 1, progress: 1, _meta: { Platform: other.platform } },
          },
        ],
        'Platform',
      ],
    ];
    for (const [body, member] of variants) {
      const res = await fetch(`${gateway.url}/mcp/p/recorder`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(body),
      });
      expect(res.status, member).toBe(400);
      const answer: any = await res.json();
      expect(answer.error.code).toBe(-32600);
      expect(answer.error.message).toContain(
        `Member ${JSON.stringify(member)} differs from an MCP member name only in letter case`,
      );
    }
    expect(recorded).toHaveLength(0);
    expect(receipts.length).toBe(receiptsBefore);
  });

  it('sends a third-party credential only when it is sent once and not named for another provider', async () => {
    recorded.length = 0;
    const call = (headers: Array<[string, string]>) =>
      fetch(`${gateway.url}/mcp/p/recorder`, {
        method: 'POST',
        headers: [
          ['authorization', `Bearer ${token}`],
          ['content-type', 'application/json'],
          ['accept', 'application/json, text/event-stream'],
          ...headers,
        ],
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'crm.lookup', arguments: {} },
        }),
      });
    // Two header lines (fetch would join them into one before sending).
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'crm.lookup', arguments: {} },
    });
    const twice = await sendRawHttp(
      gateway.url,
      `POST /mcp/p/recorder HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
        `X-PLATFORM-Upstream-Authorization: Bearer first-secret\r\nX-PLATFORM-Upstream-Authorization: Bearer second-secret\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(twice).toMatch(/^HTTP\/1\.1 400 /);
    expect(twice).toContain('Send X-PLATFORM-Upstream-Authorization once: it is one credential, for one provider.');
    const aggregateBody = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'recorder__crm.lookup', arguments: {} },
    });
    const twiceOnMcp = await sendRawHttp(
      gateway.url,
      `POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nX-PLATFORM-Upstream-Provider: recorder\r\n` +
        `X-PLATFORM-Upstream-Authorization: Bearer first-secret\r\nX-PLATFORM-Upstream-Authorization: Bearer second-secret\r\nContent-Length: ${Buffer.byteLength(aggregateBody)}\r\nConnection: close\r\n\r\n${aggregateBody}`,
    );
    expect(twiceOnMcp).toMatch(/^HTTP\/1\.1 400 /);
    expect(twiceOnMcp).toContain('Send X-PLATFORM-Upstream-Authorization once');
    const elsewhere = await call([
      ['x-platform-upstream-authorization', 'Bearer meant-for-hother'],
      ['x-platform-upstream-provider', 'hother'],
    ]);
    expect(elsewhere.status).toBe(400);
    expect(((await elsewhere.json()) as any).error.message).toMatch(
      /^X-PLATFORM-Upstream-Provider names "hother", not "recorder" of this path; nothing was sent/,
    );
    expect(recorded).toHaveLength(0);
    const named = await call([
      ['x-platform-upstream-authorization', 'Bearer meant-for-recorder'],
      ['x-platform-upstream-provider', 'recorder'],
    ]);
    expect(named.status).toBe(200);
    expect(recorded[0]!.headers['authorization']).toBe('Bearer meant-for-recorder');
  });

  it("passes on none of the caller's claims of where the request came from, nor the headers its Connection names", async () => {
    recorded.length = 0;
    const claims = {
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-host': 'victim.example',
      'x-forwarded-proto': 'https',
      'x-real-ip': '203.0.113.8',
      forwarded: 'for=203.0.113.9;proto=https',
      'true-client-ip': '203.0.113.10',
      'x-client-ip': '203.0.113.11',
      'x-custom-hop': 'for this hop only',
      connection: 'keep-alive, x-custom-hop',
    };
    // node:http, not fetch: fetch never sends a Connection header of the caller's.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${gateway.url}/mcp/p/recorder`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-kept': 'yes',
          ...claims,
        },
      });
      req.on('response', (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0)));
      req.on('error', reject);
      req.end(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'crm.lookup', arguments: {} } }),
      );
    });
    expect(status).toBe(200);
    const seen = recorded[0]!.headers;
    expect(Object.keys(seen).filter((name) => name in claims && name !== 'connection')).toEqual([]);
    expect(seen['x-kept']).toBe('yes');
  });

  it('takes a body sent with Expect: 100-continue (as curl sends large ones) and does not pass the header on', async () => {
    recorded.length = 0;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'crm.lookup', arguments: { note: 'x'.repeat(2048) } },
    });
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${gateway.url}/mcp/p/recorder`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          expect: '100-continue',
          'content-length': Buffer.byteLength(body),
        },
      });
      req.on('continue', () => req.end(body));
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).result.isError).toBeFalsy();
    expect(recorded[0]!.headers['expect']).toBeUndefined();
    expect(recorded[0]!.body.params.arguments.note).toHaveLength(2048);
  });

  it('answers an unreachable upstream with an error result and an error receipt', async () => {
    const res = await postMcp(`${gateway.url}/mcp/p/dead`, token, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'anything', arguments: {} },
    });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.result.isError).toBe(true);
    expect(body.result.content[0].text).toMatch(/cannot reach the upstream/);
    expect(receipts.at(-1)).toMatchObject({ provider: 'dead', status: 'error' });
  });

  it('refuses a missing or bad agent credential with 401 and WWW-Authenticate', async () => {
    for (const authorization of [undefined, 'Bearer nope']) {
      const res = await fetch(`${gateway.url}/mcp/p/everything`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it('refuses a session id it did not seal', async () => {
    const res = await fetch(`${gateway.url}/mcp/p/everything`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': 'pss1.forged',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
  });

  it('tells a client whose upstream session was forgotten (a restart) to start a new one: 404, though server-everything says 400', async () => {
    const c = new Client({ name: 'restart-agent', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/p/everything`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await c.connect(transport);
    const session = transport.sessionId!;
    await c.close();
    await everything.stop();
    everything = await startEverything(everything.port);
    const post = (message: unknown) =>
      fetch(`${gateway.url}/mcp/p/everything`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': session,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify(message),
      });
    const listed = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(listed.status).toBe(404);
    expect(((await listed.json()) as any).error.message).toMatch(/initialize a new one/);
    const before = receipts.length;
    const called = await post({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', arguments: { message: 'x' } },
    });
    expect(called.status).toBe(404);
    expect(((await called.json()) as any).result.isError).toBe(true);
    expect(receipts.slice(before).map((r) => [r.status, r.outcome])).toEqual([
      ['error', expect.stringMatching(/no longer knows the session/)],
    ]);
    // A new session works at once.
    const again = new Client({ name: 'restart-agent', version: '1' });
    await again.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/p/everything`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    expect(JSON.stringify((await again.callTool({ name: 'echo', arguments: { message: 'back' } })).content)).toContain(
      'back',
    );
    await again.close();
  });

  it('ends a POST event stream once its request is answered, and sends a quick answer in one piece', async () => {
    const post = (provider: string) =>
      fetch(`${gateway.url}/mcp/p/${provider}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'work', arguments: {} } }),
      });
    const started = performance.now();
    const slow = await post('slow-close');
    const text = await slow.text();
    // The upstream keeps its stream open 3 s after the answer; the caller's ends with the answer.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(slow.headers.get('content-type')).toBe('text/event-stream');
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) =>
        JSON.parse(
          e
            .split('\n')
            .find((l) => l.startsWith('data: '))!
            .slice(6),
        ),
      );
    expect(events.map((e) => e.method ?? e.id)).toEqual(['notifications/message', 7]);
    expect(events[1].result._meta.platform).toMatchObject({
      agin_id: aginId,
      call_id: expect.stringMatching(/^call_/),
    });
    expect(receipts.at(-1)).toMatchObject({ provider: 'slow-close', tool: 'work', status: 'ok' });

    const quick = await post('quick');
    // Answered in one upstream read: headers, event and end leave together, with a length.
    expect(quick.headers.get('content-length')).not.toBeNull();
    expect(quick.headers.get('transfer-encoding')).toBeNull();
    const quickText = await quick.text();
    expect(
      JSON.parse(
        quickText
          .split('\n')
          .find((l) => l.startsWith('data: '))!
          .slice(6),
      ).result.content[0].text,
    ).toBe('streamed');
    expect(receipts.at(-1)).toMatchObject({ provider: 'quick', status: 'ok' });
  });

  describe('aggregated /mcp', () => {
    it('lists every online tool as <provider>__<tool> and calls through a pooled session with identity', async () => {
      const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      const c = new Client({ name: 'agg-agent', version: '1' });
      await c.connect(transport);
      const names = (await c.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('everything__echo');
      expect(names).toContain('dead__ghost');
      const before = receipts.length;
      const echoed = await c.callTool({ name: 'everything__echo', arguments: { message: 'via aggregate' } });
      expect(JSON.stringify(echoed.content)).toContain('via aggregate');
      expect((echoed._meta as any)?.platform?.agin_id).toBe(aginId);
      const again = await c.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } });
      expect(JSON.stringify(again.content)).toContain('5');
      const progress: number[] = [];
      await c.callTool(
        { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(progress).toEqual([1, 2]);
      const ghost = await c.callTool({ name: 'dead__ghost', arguments: {} });
      expect(ghost.isError).toBe(true);
      const unknown = await c.callTool({ name: 'nope', arguments: {} });
      expect(unknown.isError).toBe(true);
      expect(receipts.slice(before).map((r) => `${r.provider}/${r.tool}/${r.status}`)).toEqual([
        'everything/echo/ok',
        'everything/get-sum/ok',
        'everything/trigger-long-running-operation/ok',
        'dead/ghost/error',
        // A name no connector has is the agent's call too (a receipt for the attempt).
        '(unknown)/nope/error',
      ]);
      await c.close();
    });

    it('answers a plain tools/call as JSON itself and leaves every other shape to the SDK server', async () => {
      const post = (body: string, headers: Record<string, string> = {}) =>
        fetch(`${gateway.url}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
            ...headers,
          },
          body,
        });
      const before = receipts.length;
      const plain = await post(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'a1',
          method: 'tools/call',
          params: { name: 'everything__echo', arguments: { message: 'fast' } },
        }),
      );
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
      const answer = (await plain.json()) as any;
      expect(answer.id).toBe('a1');
      expect(JSON.stringify(answer.result.content)).toContain('fast');
      expect(answer.result._meta.platform.agin_id).toBe(aginId);
      expect(answer.result._meta.platform.call_id).toBe(receipts.at(-1)?.callId);
      expect(receipts.length).toBe(before + 1);

      // Invalid params: -32602 naming what is wrong in one line, and no call, no receipt.
      const noName = (await (
        await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } }))
      ).json()) as any;
      expect(noName).toMatchObject({ id: 2, error: { code: -32602 } });
      expect(noName.error.message).toMatch(/^Invalid params for tools\/call: params\.name: /);
      expect(noName.error.message).not.toContain('\n');
      const badArguments = (await (
        await post(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 5,
            method: 'tools/call',
            params: { name: 'everything__echo', arguments: 'x' },
          }),
        )
      ).json()) as any;
      expect(badArguments).toMatchObject({
        id: 5,
        error: { code: -32602, message: expect.stringContaining('params.arguments') },
      });
      expect(receipts.length).toBe(before + 1);
      // An unsupported protocol version, bad JSON and a too-large body are refused as the SDK does.
      const version = await post(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'everything__echo', arguments: { message: 'x' } },
        }),
        { 'mcp-protocol-version': '1999-01-01' },
      );
      expect(version.status).toBe(400);
      const garbage = await post('{"jsonrpc":');
      expect(garbage.status).toBe(400);
      expect(((await garbage.json()) as any).error.code).toBe(-32700);
      const huge = await post(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 4,
          method: 'tools/call',
          params: { name: 'everything__echo', arguments: { message: 'x'.repeat(5 * 1024 * 1024) } },
        }),
      );
      expect(huge.status).toBe(413);
      expect(receipts.length).toBe(before + 1);
    });

    it('re-initialises a forgotten upstream session transparently', async () => {
      await everything.stop();
      everything = await startEverything(everything.port);
      const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      const c = new Client({ name: 'agg-agent-2', version: '1' });
      await c.connect(transport);
      const echoed = await c.callTool({ name: 'everything__echo', arguments: { message: 'after restart' } });
      expect(JSON.stringify(echoed.content)).not.toContain('Call failed');
      expect(echoed.isError).toBeFalsy();
      expect(JSON.stringify(echoed.content)).toContain('after restart');
      await c.close();
    });

    it('holds at most maxSessions upstream sessions, however many credentials callers send, and ends the ones it drops', async () => {
      const deleted: string[] = [];
      let initialized = 0;
      const upstream = await listen(async (req, res) => {
        let text = '';
        for await (const chunk of req) text += chunk;
        if (req.method === 'DELETE') {
          deleted.push(`${req.headers['mcp-session-id']} ${req.headers['authorization']}`);
          res.writeHead(200).end();
          return;
        }
        const body = JSON.parse(text);
        if (body.id === undefined) {
          res.writeHead(202).end();
          return;
        }
        const session = body.method === 'initialize' ? `s${++initialized}` : String(req.headers['mcp-session-id']);
        const result =
          body.method === 'initialize'
            ? {
                protocolVersion: '2025-06-18',
                capabilities: { tools: {} },
                serverInfo: { name: 'sessions', version: '1' },
              }
            : { content: [{ type: 'text', text: session }] };
        res
          .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': session })
          .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
      });
      try {
        const pool = createUpstreamPool({ timeoutMs: 5_000, maxSessions: 2 });
        const call = (credential: string) =>
          pool.request({
            url: upstream.url,
            method: 'tools/call',
            params: { name: 'x' },
            headers: { authorization: credential },
          });
        expect(((await call('Bearer a')).result as any).content[0].text).toBe('s1');
        expect(((await call('Bearer b')).result as any).content[0].text).toBe('s2');
        // a is used again, so b is the least recently used when c arrives.
        expect(((await call('Bearer a')).result as any).content[0].text).toBe('s1');
        expect(((await call('Bearer c')).result as any).content[0].text).toBe('s3');
        expect(pool.size()).toBe(2);
        await expect.poll(() => deleted).toEqual(['s2 Bearer b']);
        expect(((await call('Bearer b')).result as any).content[0].text).toBe('s4');
        await expect.poll(() => deleted).toEqual(['s2 Bearer b', 's1 Bearer a']);
      } finally {
        upstream.server.close();
      }
    });
  });
});
