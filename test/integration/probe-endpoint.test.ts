/**
 * Pins the prober's own streamable HTTP client (probes/probe-endpoint.ts) against the MCP SDK's
 * server transport (stateful with event streams, stateless with JSON), against the SDK v2 server
 * (revision 2026-07-28: server/discover, no session, per-request `_meta` and MCP headers; 2026-only
 * or with its fallback for earlier clients), and against providers that misbehave: server/discover
 * first and initialize when it gets no usable answer, the revisions and capabilities each server
 * offers, tools/list paging by nextCursor, the session id echoed and the session deleted at the
 * end, protocol version negotiation and its header, a ping asked mid-stream, a stream left open
 * after the answer, redirects refused (the gateway follows none), and failures that say what went
 * wrong without quoting the body.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { createGuardedRequest } from '../../probes/guarded-request.ts';
import { probeEndpoint } from '../../probes/index.ts';
import { startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

const PAGES = [
  [
    {
      name: 'a',
      description: 'A.',
      inputSchema: { type: 'object' },
      annotations: { platform: { requires_agin: true, caller_identity: 'agin' } },
    },
  ],
  [{ name: 'b', inputSchema: { type: 'object' } }],
  [{ name: 'c', inputSchema: { type: 'object' } }],
];

/** What a peer saw: each request's method (or HTTP verb) and MCP headers. */
interface Seen {
  method: string;
  session: string | undefined;
  version: string | undefined;
}

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; server: HttpServer }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

async function readJson(req: IncomingMessage): Promise<any> {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  return raw === '' ? undefined : JSON.parse(raw);
}

/** The SDK's low-level Server with paged tools/list, behind its own streamable HTTP transport. */
function sdkServer(): Server {
  const server = new Server({ name: 'sdk-peer', version: '2.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const index = Number(request.params?.cursor ?? 0);
    return { tools: PAGES[index] as never, ...(index + 1 < PAGES.length ? { nextCursor: String(index + 1) } : {}) };
  });
  return server;
}

/** Stateful (a session per initialize, answers as event streams) or stateless (JSON answers). */
async function startSdkPeer(mode: 'stateful' | 'stateless') {
  const seen: Seen[] = [];
  const closed: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const { url, server } = await listen(async (req, res) => {
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const session = req.headers['mcp-session-id'] as string | undefined;
    seen.push({
      method: body?.method ?? (body?.result ? 'response' : req.method!),
      session,
      version: req.headers['mcp-protocol-version'] as string | undefined,
    });
    let transport = session ? sessions.get(session) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport(
        mode === 'stateful'
          ? {
              sessionIdGenerator: randomUUID,
              onsessioninitialized: (id) => void sessions.set(id, transport!),
              onsessionclosed: (id) => void closed.push(id),
            }
          : { sessionIdGenerator: undefined, enableJsonResponse: true },
      );
      await sdkServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  return { url, seen, closed, close: () => closeServer(server) };
}

function closeServer(server: HttpServer): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('probeEndpoint', () => {
  const guarded = createGuardedRequest({ allowPrivate: true, timeoutMs: 5_000 });
  const limits = { timeoutMs: 5_000, maxPages: 10, maxTools: 100 };
  const probe = (url: string, over: Partial<typeof limits> = {}) =>
    probeEndpoint(url, guarded.request, { ...limits, ...over }, () => performance.now());
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((c) => c()));
  });
  afterAll(() => guarded.close());

  describe('against the MCP SDK server', () => {
    it.each(['stateful', 'stateless'] as const)('reads every tools/list page from a %s server', async (mode) => {
      const peer = await startSdkPeer(mode);
      cleanups.push(peer.close);
      const outcome = await probe(peer.url);
      expect(outcome).toMatchObject({
        ok: true,
        error: null,
        protocolVersion: LATEST_PROTOCOL_VERSION,
        serverInfo: { name: 'sdk-peer', version: '2.0.0' },
      });
      expect(outcome).toMatchObject({ revisions: [LATEST_PROTOCOL_VERSION], capabilities: { tools: {} } });
      expect(outcome.tools.map((t) => t.name)).toEqual(['a', 'b', 'c']);
      expect(outcome.tools[0]).toMatchObject({
        requiresAgin: true,
        callerIdentity: 'agin',
        annotations: { platform: { requires_agin: true } },
      });
      // server/discover first; the SDK v1 server refuses it, and the probe falls back to initialize.
      expect(peer.seen.map((s) => s.method)).toEqual([
        'server/discover',
        'initialize',
        'notifications/initialized',
        'tools/list',
        'tools/list',
        'tools/list',
        ...(mode === 'stateful' ? ['DELETE'] : []),
      ]);
    });

    it.each([307, 308, 301])(
      'fails on a %s redirect to a working server, naming the URL to list instead, and never follows it',
      async (status) => {
        // The gateway calls the listed URL and follows no redirect: a probe that followed one would
        // show tools online that every call through Plaza fails on.
        const peer = await startSdkPeer('stateless');
        cleanups.push(peer.close);
        const { url, server } = await listen(
          (req, res) => void res.writeHead(status, { location: `${peer.url}?sig=secret-token` }).end(),
        );
        cleanups.push(() => closeServer(server));
        const outcome = await probe(url);
        expect(outcome).toMatchObject({ ok: false, tools: [] });
        expect(outcome.error).toContain(`redirects (HTTP ${status}) to ${peer.url};`);
        expect(outcome.error).not.toContain('secret-token');
        expect(peer.seen).toEqual([]);
      },
    );

    it('echoes the session id and the negotiated version after initialize, then deletes the session', async () => {
      const peer = await startSdkPeer('stateful');
      cleanups.push(peer.close);
      expect((await probe(peer.url)).ok).toBe(true);
      const [discover, init, ...rest] = peer.seen;
      expect(discover).toEqual({ method: 'server/discover', session: undefined, version: '2026-07-28' });
      expect(init).toEqual({ method: 'initialize', session: undefined, version: undefined });
      const session = rest[0]!.session;
      expect(session).toEqual(expect.any(String));
      expect(rest.every((s) => s.session === session && s.version === LATEST_PROTOCOL_VERSION)).toBe(true);
      expect(peer.closed).toEqual([session]);
    });
  });

  describe('against the MCP SDK v2 server (revision 2026-07-28)', () => {
    const pages = [[{ name: 'a', description: 'A.' }], [{ name: 'b' }], [{ name: 'c' }]];
    const STATELESS_META = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'plaza-prober', version: '1.0.0' },
    };

    it('reads a 2026-only server: server/discover, then every tools/list page with the _meta and headers each request needs', async () => {
      const peer = await startSdkV2Upstream({ legacy: 'reject', pages, name: 'only-2026' });
      cleanups.push(peer.close);
      const outcome = await probe(peer.url);
      expect(outcome).toMatchObject({
        ok: true,
        error: null,
        protocolVersion: '2026-07-28',
        revisions: ['2026-07-28'],
        serverInfo: { name: 'only-2026', version: '2.4.0' },
      });
      expect(outcome.capabilities).toEqual({ tools: { listChanged: true }, resources: {} });
      expect(outcome.tools.map((t) => t.name)).toEqual(['a', 'b', 'c']);
      // No session: no initialize before tools/list, no session id, no DELETE; initialize once at
      // the end asks whether it serves the earlier revisions (it refuses).
      expect(peer.seen.map((s) => `${s.method} ${s.status}`)).toEqual([
        'server/discover 200',
        'tools/list 200',
        'tools/list 200',
        'tools/list 200',
        'initialize 400',
      ]);
      const stateless = peer.seen.slice(0, 4);
      expect(stateless.map((s) => s.params?.['cursor'])).toEqual([undefined, undefined, '1', '2']);
      for (const s of stateless) {
        expect(s.headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': s.method });
        expect(s.headers['mcp-session-id']).toBeUndefined();
        expect(s.meta).toEqual(STATELESS_META);
      }
    });

    it("records both revisions of a server with the SDK's fallback for earlier clients", async () => {
      const peer = await startSdkV2Upstream({ legacy: 'stateless', pages });
      cleanups.push(peer.close);
      const outcome = await probe(peer.url);
      expect(outcome).toMatchObject({
        ok: true,
        protocolVersion: '2026-07-28',
        revisions: ['2026-07-28', LATEST_PROTOCOL_VERSION],
      });
      expect(outcome.tools.map((t) => t.name)).toEqual(['a', 'b', 'c']);
      expect(peer.seen.map((s) => `${s.method} ${s.status}`)).toEqual([
        'server/discover 200',
        'tools/list 200',
        'tools/list 200',
        'tools/list 200',
        'initialize 200',
      ]);
    });
  });

  describe('against providers that answer server/discover in their own way', () => {
    const discovered = (m: any, supportedVersions = ['2026-07-28']) => ({
      jsonrpc: '2.0',
      id: m.id,
      result: {
        resultType: 'complete',
        supportedVersions,
        capabilities: { tools: {} },
        ttlMs: 0,
        cacheScope: 'public',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'raw26', version: '1' } },
      },
    });
    const initialized = (m: any) => ({
      jsonrpc: '2.0',
      id: m.id,
      result: {
        protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'raw', version: '1' },
      },
    });
    const listed = (m: any) => ({
      jsonrpc: '2.0',
      id: m.id,
      result: {
        resultType: 'complete',
        tools: [{ name: 'only', inputSchema: { type: 'object' } }],
        ttlMs: 0,
        cacheScope: 'public',
      },
    });
    const json = (res: ServerResponse, body: unknown, status = 200) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    async function start(
      onDiscover: (m: any, res: ServerResponse) => void,
      onInitialize: (m: any, res: ServerResponse) => void = (m, res) => json(res, initialized(m)),
    ) {
      const seen: { method: string; version: string | undefined }[] = [];
      const { url, server } = await listen(async (req, res) => {
        const m = req.method === 'POST' ? await readJson(req) : undefined;
        seen.push({
          method: m?.method ?? req.method!,
          version: req.headers['mcp-protocol-version'] as string | undefined,
        });
        if (req.method !== 'POST') return res.writeHead(405).end();
        if (m.id === undefined) return res.writeHead(202).end();
        if (m.method === 'server/discover') return onDiscover(m, res);
        if (m.method === 'initialize') return onInitialize(m, res);
        json(res, listed(m));
      });
      cleanups.push(() => closeServer(server));
      return { url, seen };
    }

    it.each([
      [
        'a JSON-RPC error',
        (m: any, res: ServerResponse) =>
          json(res, { jsonrpc: '2.0', id: m.id, error: { code: -32603, message: 'Internal error' } }),
      ],
      [
        '-32022 naming only earlier revisions',
        (m: any, res: ServerResponse) =>
          json(
            res,
            {
              jsonrpc: '2.0',
              id: m.id,
              error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2025-06-18'] } },
            },
            400,
          ),
      ],
      ['HTTP 400 without a body', (_m: any, res: ServerResponse) => res.writeHead(400).end()],
      ['HTTP 500', (_m: any, res: ServerResponse) => res.writeHead(500).end()],
      [
        'a result that is not a discover result',
        (m: any, res: ServerResponse) => json(res, { jsonrpc: '2.0', id: m.id, result: {} }),
      ],
      [
        'a discover result offering only a revision the probe does not speak',
        (m: any, res: ServerResponse) => json(res, discovered(m, ['2099-01-01'])),
      ],
    ])('falls back to initialize when server/discover answers with %s', async (_name, onDiscover) => {
      const peer = await start(onDiscover);
      const outcome = await probe(peer.url);
      expect(outcome).toMatchObject({
        ok: true,
        error: null,
        protocolVersion: LATEST_PROTOCOL_VERSION,
        revisions: [LATEST_PROTOCOL_VERSION],
        serverInfo: { name: 'raw' },
      });
      expect(outcome.tools.map((t) => t.name)).toEqual(['only']);
      expect(peer.seen.map((s) => s.method)).toEqual([
        'server/discover',
        'initialize',
        'notifications/initialized',
        'tools/list',
      ]);
      expect(peer.seen.at(-1)!.version).toBe(LATEST_PROTOCOL_VERSION);
    });

    it('does not fall back when server/discover asks for a Bearer token: the endpoint needs credentials', async () => {
      const peer = await start((_m, res) => res.writeHead(401, { 'www-authenticate': 'Bearer realm="x"' }).end());
      expect(await probe(peer.url)).toMatchObject({ ok: false, authRequired: true, revisions: [], capabilities: null });
      expect(peer.seen.map((s) => s.method)).toEqual(['server/discover']);
    });

    it('does not fall back when server/discover gets no answer in time', async () => {
      const peer = await start(() => undefined);
      expect(await probe(peer.url, { timeoutMs: 300 })).toMatchObject({ ok: false, error: 'timed out' });
      expect(peer.seen.map((s) => s.method)).toEqual(['server/discover']);
    });

    it('fails when a 2026-07-28 tools/list result is not complete', async () => {
      const { url, server } = await listen(async (req, res) => {
        const m = await readJson(req);
        if (m.method === 'server/discover') return json(res, discovered(m));
        if (m.method === 'initialize')
          return json(
            res,
            { jsonrpc: '2.0', id: m.id, error: { code: -32022, message: 'Unsupported protocol version' } },
            400,
          );
        json(res, { jsonrpc: '2.0', id: m.id, result: { resultType: 'input_required', inputRequests: {} } });
      });
      cleanups.push(() => closeServer(server));
      expect(await probe(url)).toMatchObject({
        ok: false,
        error: expect.stringContaining('tools/list result is not complete (resultType "input_required")'),
      });
    });

    it('keeps a large capability object by its names only', async () => {
      const experimental = { big: { blob: 'x'.repeat(20_000) } };
      const peer = await start(
        (m, res) => {
          const answer = discovered(m);
          json(res, { ...answer, result: { ...answer.result, capabilities: { tools: {}, experimental } } });
        },
        (m, res) => json(res, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }),
      );
      expect(await probe(peer.url)).toMatchObject({
        ok: true,
        revisions: ['2026-07-28'],
        capabilities: { tools: {}, experimental: {} },
        serverInfo: { name: 'raw26' },
      });
    });
  });

  describe('against providers that answer in their own way', () => {
    /** A provider whose answers the test writes; `answer` gets each POSTed message. */
    async function startRaw(
      answer: (message: any, res: ServerResponse, req: IncomingMessage) => void,
      options: { discover?: boolean } = {},
    ) {
      const seen: Seen[] = [];
      const { url, server } = await listen(async (req, res) => {
        const message = req.method === 'POST' ? await readJson(req) : undefined;
        seen.push({
          method: message?.method ?? (message && 'result' in message ? 'response' : req.method!),
          session: undefined,
          version: req.headers['mcp-protocol-version'] as string | undefined,
        });
        if (req.method !== 'POST') return res.writeHead(405).end();
        if (message.id === undefined || !message.method) return res.writeHead(202).end();
        // A server before 2026-07-28 knows no server/discover (unless the test answers it).
        if (message.method === 'server/discover' && !options.discover)
          return json(res, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
        answer(message, res, req);
      });
      cleanups.push(() => closeServer(server));
      return { url, seen };
    }
    const json = (res: ServerResponse, body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const init = (message: any, version = message.params.protocolVersion) => ({
      jsonrpc: '2.0',
      id: message.id,
      result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } },
    });
    const tools = (message: any) => ({
      jsonrpc: '2.0',
      id: message.id,
      result: { tools: [{ name: 'only', inputSchema: { type: 'object' } }] },
    });

    it('accepts an older version the server picks and sends it from then on', async () => {
      const peer = await startRaw((m, res) => json(res, m.method === 'initialize' ? init(m, '2025-03-26') : tools(m)));
      const outcome = await probe(peer.url);
      expect(outcome).toMatchObject({ ok: true, protocolVersion: '2025-03-26' });
      expect(peer.seen.filter((s) => s.method === 'tools/list').map((s) => s.version)).toEqual(['2025-03-26']);
    });

    it('fails on a version it does not support', async () => {
      const peer = await startRaw((m, res) => json(res, init(m, '1999-01-01')));
      expect(await probe(peer.url)).toMatchObject({
        ok: false,
        error: expect.stringContaining('protocol version is not supported: 1999-01-01'),
      });
    });

    it('answers a ping asked mid-stream, skips notifications, and stops reading a stream left open after the answer', async () => {
      const peer = await startRaw((m, res) => {
        if (m.method === 'initialize') return json(res, init(m));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `: comment\r\n\r\nevent: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\r\n\r\n`,
        );
        res.write(`data: {"jsonrpc":"2.0","id":"srv-1","method":"ping"}\n\n`);
        // The answer split across writes, then the stream stays open.
        const answer = JSON.stringify(tools(m));
        res.write(`id: 7\ndata: ${answer.slice(0, 20)}`);
        setTimeout(() => res.write(`${answer.slice(20)}\n\n`), 20);
      });
      const outcome = await probe(peer.url);
      expect(outcome).toMatchObject({ ok: true, error: null });
      expect(outcome.tools.map((t) => t.name)).toEqual(['only']);
      await expect.poll(() => peer.seen.filter((s) => s.method === 'response').length).toBe(1);
    });

    it.each([
      [
        'an HTTP error',
        (_m: any, res: ServerResponse) => res.writeHead(404, { 'content-type': 'text/plain' }).end('secret page body'),
        /HTTP 404/,
      ],
      [
        'invalid JSON',
        (_m: any, res: ServerResponse) =>
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"secret page body'),
        /invalid JSON/,
      ],
      [
        'a JSON-RPC error',
        (m: any, res: ServerResponse) =>
          json(res, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }),
        /McpError: MCP error -32601: Method not found/,
      ],
      [
        'another content type',
        (_m: any, res: ServerResponse) =>
          res.writeHead(200, { 'content-type': 'text/html' }).end('<p>secret page body</p>'),
        /Unexpected content type: text\/html/,
      ],
      [
        'a non-JSON-RPC answer',
        (_m: any, res: ServerResponse) => json(res, { secret: 'page body' }),
        /not a JSON-RPC message/,
      ],
      [
        'an invalid initialize result',
        (m: any, res: ServerResponse) => json(res, { jsonrpc: '2.0', id: m.id, result: { protocolVersion: 'x' } }),
        /Invalid initialize result/,
      ],
      [
        'a stream that ends without the answer',
        (_m: any, res: ServerResponse) =>
          res
            .writeHead(200, { 'content-type': 'text/event-stream' })
            .end('data: {"jsonrpc":"2.0","method":"notifications/x"}\n\n'),
        /ended without a response/,
      ],
      ['a request accepted with 202', (_m: any, res: ServerResponse) => res.writeHead(202).end(), /HTTP 202/],
    ])('fails on %s, without quoting the body', async (_name, answer, error) => {
      // server/discover gets the same answer: the probe falls back to initialize, which fails too.
      const peer = await startRaw(answer, { discover: true });
      const outcome = await probe(peer.url);
      expect(outcome).toMatchObject({ ok: false, tools: [], protocolVersion: null });
      expect(outcome.error).toMatch(error);
      expect(outcome.error).not.toContain('secret');
    });

    it('times out on a provider that never answers', async () => {
      const peer = await startRaw(() => undefined);
      expect(await probe(peer.url, { timeoutMs: 300 })).toMatchObject({ ok: false, error: 'timed out' });
    });

    it('stops following cursors after maxPages and keeps at most maxTools', async () => {
      let page = 0;
      const peer = await startRaw((m, res) => {
        if (m.method === 'initialize') return json(res, init(m));
        page++;
        json(res, {
          jsonrpc: '2.0',
          id: m.id,
          result: { tools: [{ name: `t${page}a` }, { name: `t${page}b` }], nextCursor: `c${page}` },
        });
      });
      const outcome = await probe(peer.url, { maxPages: 3, maxTools: 5 });
      expect(outcome.ok).toBe(true);
      expect(outcome.tools.map((t) => t.name)).toEqual(['t1a', 't1b', 't2a', 't2b', 't3a']);
      expect(peer.seen.filter((s) => s.method === 'tools/list')).toHaveLength(3);
    });
  });

  describe('behind the SSRF guard', () => {
    let peer: { url: string; close(): Promise<void> };
    beforeAll(async () => {
      peer = await startSdkPeer('stateless');
    });
    afterAll(() => peer.close());

    it('refuses a loopback provider unless private targets are allowed', async () => {
      const strict = createGuardedRequest({ allowPrivate: false });
      const outcome = await probeEndpoint(peer.url, strict.request, limits, () => 0);
      await strict.close();
      expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/loopback/) });
    });

    it('refuses a name that resolves to a private address at connect time', async () => {
      const strict = createGuardedRequest({ allowPrivate: false, resolve: async () => ['10.0.0.7'] });
      const outcome = await probeEndpoint('http://provider.example.test/mcp', strict.request, limits, () => 0);
      await strict.close();
      expect(outcome.error).toContain('Refused to connect to provider.example.test: it resolves to a private address.');
      // Published as the listing's last_probe.error: the address stays in the server's log.
      expect(outcome.error).not.toContain('10.0.0.7');
      expect(outcome.logDetail).toBe('resolved to 10.0.0.7');
    });
  });
});
