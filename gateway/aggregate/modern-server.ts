/**
 * `/mcp` for revision 2026-07-28: SDK v2's `createMcpHandler` (modern only: 2025 requests are
 * served by legacy-server), which answers `server/discover`, checks the MCP-Protocol-Version,
 * Mcp-Method and Mcp-Name headers against the body (-32020, -32022), the client capabilities a
 * request needs (-32021), stamps `resultType` and the cache hints, and serves
 * `subscriptions/listen`. A request closed by its client is cancelled (CallCancelled), and the
 * upstream is told.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

import type * as ServerSdkV2 from '@modelcontextprotocol/server';

import type { AgentIdentity } from '../identity/agin-card.ts';
import { CallCancelled } from './cancellation.ts';
import { AGGREGATE_CAPABILITIES, type MethodHandler } from './methods.ts';
import type { AgentNotification } from './relay.ts';
import { CallerRpcError } from './relayed-error.ts';

/** What the 2026-07-28 server uses. */
export interface ModernServerDeps {
  methods: Record<string, MethodHandler>;
  serverInfo: { name: string; version: string };
  /** Where tool list changes come from for `subscriptions/listen` streams (watched while one is open). */
  bus: ServerSdkV2.ServerEventBus;
}

/** The request a handler serves: who asks, and the Node request and response it came in. */
interface Exchange {
  identity: AgentIdentity;
  req: IncomingMessage;
  res: ServerResponse;
}

/**
 * How long a client may reuse what it was shown (ms) — every list of `/mcp` depends on the agent
 * (the authorize hook filters it, resources and prompts are asked for in its name), so none is
 * shared (`private`); server/discover is the same for everyone.
 */
const CACHE_HINTS = {
  'tools/list': { ttlMs: 2_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 5_000, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 5_000, cacheScope: 'private' },
  'prompts/list': { ttlMs: 5_000, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
  'server/discover': { ttlMs: 60_000, cacheScope: 'public' },
} as const;

/** The inputs and state a request made again carries (the SDK lifts them out of its params). */
function inputRoundOf(mcpReq: {
  inputResponses?: Record<string, unknown>;
  requestState: () => unknown;
}): { inputResponses?: Record<string, unknown>; requestState?: string } | undefined {
  const state = mcpReq.requestState();
  if (mcpReq.inputResponses === undefined && typeof state !== 'string') return undefined;
  return {
    ...(mcpReq.inputResponses === undefined ? {} : { inputResponses: mcpReq.inputResponses }),
    ...(typeof state === 'string' ? { requestState: state } : {}),
  };
}

/** Builds the 2026-07-28 handler once (SDK v2 is loaded on first use). */
export async function createModernServer(deps: ModernServerDeps) {
  const sdk: typeof ServerSdkV2 = await import('@modelcontextprotocol/server');
  const exchanges = new WeakMap<Request, Exchange>();
  const factory = (context: { requestInfo?: Request }) => {
    const server = new sdk.Server(deps.serverInfo, {
      capabilities: { tools: { listChanged: true }, ...AGGREGATE_CAPABILITIES },
      cacheHints: CACHE_HINTS,
    });
    const exchange = context.requestInfo ? exchanges.get(context.requestInfo) : undefined;
    for (const [method, handler] of Object.entries(deps.methods)) {
      server.setRequestHandler(method as 'tools/list', async (request, ctx) => {
        if (!exchange) throw new Error('No exchange for this request.');
        const controller = new AbortController();
        const follow = () => controller.abort(new CallCancelled('the client closed the request'));
        if (ctx.mcpReq.signal.aborted) follow();
        else ctx.mcpReq.signal.addEventListener('abort', follow, { once: true });
        // The SDK lifts the envelope out of `_meta`, under its full keys.
        const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
        const capabilities = envelope?.['io.modelcontextprotocol/clientCapabilities'];
        try {
          return (await handler((request.params ?? {}) as Record<string, unknown>, {
            ...exchange,
            signal: controller.signal,
            notify: (n: AgentNotification) => ctx.mcpReq.notify(n as never),
            clientCapabilities:
              typeof capabilities === 'object' && capabilities !== null
                ? (capabilities as Record<string, unknown>)
                : {},
            inputRound: inputRoundOf(ctx.mcpReq),
            logLevel:
              typeof envelope?.['io.modelcontextprotocol/logLevel'] === 'string'
                ? envelope['io.modelcontextprotocol/logLevel']
                : undefined,
          })) as never;
        } catch (error) {
          // A provider's error the caller gets as such (the SDK answers -32021 with HTTP 400).
          if (error instanceof CallerRpcError)
            throw new sdk.ProtocolError(error.error.code, error.error.message, error.error.data);
          throw error;
        } finally {
          ctx.mcpReq.signal.removeEventListener('abort', follow);
        }
      });
    }
    return server;
  };
  const handler = sdk.createMcpHandler(factory, {
    legacy: 'reject',
    bus: deps.bus,
  });

  return {
    /** Whether SDK v2 routes this request to its 2026-07-28 path (or refuses it there), not to the 2025 one. */
    isModern(req: IncomingMessage, body: unknown): boolean {
      const header = (name: string) => {
        const value = req.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      return (
        sdk.classifyInboundRequest({
          httpMethod: req.method ?? 'POST',
          protocolVersionHeader: header('mcp-protocol-version'),
          mcpMethodHeader: header('mcp-method'),
          mcpNameHeader: header('mcp-name'),
          ...(body === undefined ? {} : { body }),
        }).kind !== 'legacy'
      );
    },
    close: () => handler.close(),
    /** Answers one 2026-07-28 request (its body read already). */
    async serve(identity: AgentIdentity, req: IncomingMessage, res: ServerResponse, parsedBody: unknown) {
      const closed = new AbortController();
      const onClose = () => {
        if (!res.writableFinished) closed.abort();
      };
      res.once('close', onClose);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      const request = new Request(`http://plaza.invalid${req.url ?? '/mcp'}`, {
        method: req.method,
        headers,
        signal: closed.signal,
      });
      exchanges.set(request, { identity, req, res });
      const response = await handler.fetch(request, { parsedBody });
      await writeResponse(response, res);
    },
  };
}

/** Writes a web Response to a Node response, streaming its body (an event stream stays open). */
async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  if (res.destroyed) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status === 499 ? 200 : response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  res.once('close', () => body.destroy());
  body.on('error', () => res.destroy());
  body.pipe(res);
}

export type ModernServer = Awaited<ReturnType<typeof createModernServer>>;
