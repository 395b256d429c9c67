/**
 * MCP upstreams for marketplace and gateway tests: the real `@modelcontextprotocol/server-everything`
 * in streamable HTTP mode as a child process, a small JSON-RPC provider whose tool pages and
 * `annotations.platform` the test controls, and a provider on the MCP SDK's own server.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';

import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

import { startChild, stopChild } from './children.ts';
import { freePort } from './cli.ts';

const require = createRequire(import.meta.url);

/** A running server-everything. */
export interface EverythingServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts server-everything (streamable HTTP) on `port` (a free one by default); waits until it answers. */
export async function startEverything(port?: number): Promise<EverythingServer> {
  const chosen = port ?? (await freePort());
  const entry = join(
    dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
    'dist',
    'index.js',
  );
  // Through startChild: it is ended with its test file even when the test never reaches stop().
  const child = startChild(process.execPath, [entry, 'streamableHttp'], {
    // Only what it needs, plus Node's compile cache when the run has one (vitest.config.ts).
    env: {
      PATH: process.env['PATH'] ?? '',
      PORT: String(chosen),
      ...(process.env['NODE_COMPILE_CACHE'] ? { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${chosen}/mcp`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server-everything exited:\n${output}`);
    if (output.includes('listening')) break;
    if (Date.now() > deadline) {
      await stopChild(child, 0);
      throw new Error(`server-everything did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    port: chosen,
    async stop() {
      await stopChild(child);
    },
  };
}

/** A provider the test controls: `pages` of tools answered to tools/list (with nextCursor). */
export interface FixtureProvider {
  url: string;
  pages: Record<string, unknown>[][];
  /** tools/list requests seen. */
  listCalls: number;
  /** HTTP requests seen, of every method and path. */
  requests: number;
  close(): Promise<void>;
}

/** Starts a minimal stateless streamable-HTTP MCP provider answering JSON (no SSE). */
export async function startFixtureProvider(pages: Record<string, unknown>[][]): Promise<FixtureProvider> {
  const fixture: FixtureProvider = { url: '', pages, listCalls: 0, requests: 0, close: async () => undefined };
  const server: Server = createServer(async (req, res) => {
    fixture.requests++;
    if (req.method !== 'POST') return res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const message = JSON.parse(raw) as {
      id?: number;
      method: string;
      params?: { cursor?: string; protocolVersion?: string };
    };
    if (message.id === undefined) return res.writeHead(202).end();
    let result: unknown;
    if (message.method === 'initialize') {
      result = {
        protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'fixture', version: '1.0.0' },
      };
    } else if (message.method === 'tools/list') {
      fixture.listCalls++;
      const index = Number(message.params?.cursor ?? 0);
      result = {
        tools: fixture.pages[index] ?? [],
        ...(index + 1 < fixture.pages.length ? { nextCursor: String(index + 1) } : {}),
      };
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }),
      );
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fixture.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  fixture.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fixture;
}

/** The params of each request the `ask` tool sends its client. */
const ASK_PARAMS: Record<string, Record<string, unknown> | undefined> = {
  ping: undefined,
  'roots/list': undefined,
  'sampling/createMessage': { messages: [{ role: 'user', content: { type: 'text', text: 'hello?' } }], maxTokens: 10 },
  'elicitation/create': {
    message: 'Your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
  },
};

/** A provider built on the MCP SDK's own server: what it saw, and its `slow` tool's count. */
export interface SdkUpstream {
  url: string;
  /** Every request it received, in order: method, JSON-RPC body and Last-Event-ID (a resumed stream). */
  seen: { method: string; body: any; lastEventId?: string }[];
  /** `slow` calls aborted by a notifications/cancelled, and those that ran to the end. */
  slow: { aborted: number; done: number };
  /** When set, notifications/cancelled are accepted (202) and dropped: a provider that ignores them. */
  ignoreCancellations: boolean;
  /** When set, a GET resuming a stream (Last-Event-ID) is answered 503: a provider that cannot resume for now. */
  refuseResumes: boolean;
  close(): Promise<void>;
}

/**
 * Starts a stateful streamable-HTTP provider on the SDK's `McpServer` (sessions answered 404 once
 * forgotten, as the spec says), optionally resumable through the SDK's InMemoryEventStore. Tools:
 * With `requireBearer`, every request without `Authorization: Bearer <it>` is answered 401.
 * `echo {message}`, `slow {ms}`, which answers after `ms` unless cancelled, `tick {ms}`, which
 * from then on sends the session a log message (`tick <n>`) every `ms` on its GET stream,
 * `ask {method}`, which sends a log message, progress (when asked for) and then the request
 * `method` (ping, roots/list, sampling/createMessage, elicitation/create) to its client on the
 * call's own stream, and answers with what came back (`<method> answered <json>` or `<method> failed: <error>`), and
 * `polled {ms, every?}`, which closes its POST's event stream at once (SEP-1699: the client resumes
 * it with Last-Event-ID, after `retryInterval` when set), and again every `every` ms when given, and
 * answers on the resumed stream after `ms` unless cancelled.
 */
export async function startSdkUpstream(
  options: { eventStore?: boolean; retryInterval?: number; requireBearer?: string } = {},
): Promise<SdkUpstream> {
  const upstream: SdkUpstream = {
    url: '',
    seen: [],
    slow: { aborted: 0, done: 0 },
    ignoreCancellations: false,
    refuseResumes: false,
    close: async () => undefined,
  };
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const timers: NodeJS.Timeout[] = [];
  const build = () => {
    const server = new McpServer({ name: 'sdk-upstream', version: '1.0.0' }, { capabilities: { logging: {} } });
    server.registerTool('tick', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
      let n = 0;
      timers.push(
        setInterval(
          () => void server.sendLoggingMessage({ level: 'info', data: `tick ${n++}` }).catch(() => undefined),
          ms,
        ),
      );
      return { content: [{ type: 'text', text: `ticking every ${ms} ms` }] };
    });
    server.registerTool(
      'ask',
      { inputSchema: { method: z.enum(['ping', 'roots/list', 'sampling/createMessage', 'elicitation/create']) } },
      async ({ method }, extra) => {
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', data: `asking ${method}` },
        });
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: 1, total: 2 },
          });
        try {
          // Sent as they are, without the SDK's client-capability checks (createMessage, elicitInput),
          // so the request reaches the client whatever it declared.
          const answer = await extra.sendRequest(
            { method, params: ASK_PARAMS[method] } as never,
            z.object({}).passthrough(),
          );
          return { content: [{ type: 'text', text: `${method} answered ${JSON.stringify(answer)}` }] };
        } catch (error) {
          return { content: [{ type: 'text', text: `${method} failed: ${(error as Error).message}` }] };
        }
      },
    );
    server.registerTool('echo', { inputSchema: { message: z.string() } }, async ({ message }) => ({
      content: [{ type: 'text', text: `echo: ${message}` }],
    }));
    server.registerTool(
      'polled',
      { inputSchema: { ms: z.number(), every: z.number().optional() } },
      async ({ ms, every }, extra) => {
        // Only there with an event store: without one the stream could not be resumed.
        extra.closeSSEStream?.();
        const closing = every === undefined ? undefined : setInterval(() => extra.closeSSEStream?.(), every);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          extra.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        clearInterval(closing);
        return { content: [{ type: 'text', text: `polled after ${ms} ms` }] };
      },
    );
    server.registerTool('slow', { inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          upstream.slow.aborted++;
          reject(new Error('cancelled'));
        });
      });
      upstream.slow.done++;
      return { content: [{ type: 'text', text: `slept ${ms}` }] };
    });
    return server;
  };
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body: unknown = raw ? JSON.parse(raw) : undefined;
    const lastEventId = req.headers['last-event-id'];
    upstream.seen.push({ method: req.method ?? '', body, ...(typeof lastEventId === 'string' ? { lastEventId } : {}) });
    // A provider with its own credentials answers anyone else 401, as MCP authorization has it.
    if (options.requireBearer !== undefined && req.headers.authorization !== `Bearer ${options.requireBearer}`) {
      return res
        .writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"',
        })
        .end(JSON.stringify({ error: 'invalid_token', error_description: 'A token of this provider is needed.' }));
    }
    if (
      upstream.ignoreCancellations &&
      (body as { method?: unknown } | undefined)?.method === 'notifications/cancelled'
    )
      return res.writeHead(202).end();
    if (upstream.refuseResumes && typeof lastEventId === 'string')
      return res
        .writeHead(503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Try again later' } }));
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = transports.get(sessionId);
      if (!transport)
        return res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
      return transport.handleRequest(req, res, body);
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      ...(options.eventStore ? { eventStore: new InMemoryEventStore() } : {}),
      ...(options.retryInterval !== undefined ? { retryInterval: options.retryInterval } : {}),
      onsessioninitialized: (id) => void transports.set(id, transport),
      onsessionclosed: (id) => void transports.delete(id),
    });
    await build().connect(transport);
    await transport.handleRequest(req, res, body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  upstream.close = async () => {
    for (const timer of timers) clearInterval(timer);
    await Promise.all([...transports.values()].map((t) => t.close()));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return upstream;
}
