/**
 * `/mcp/p/platform` on MCP 2026-07-28: the SDK v2 server (`createMcpHandler`, modern requests only;
 * earlier revisions stay on the SDK v1 server of platform-server.ts) with the same tools and calls.
 * It answers `server/discover`, validates the revision's headers and envelope (-32020, -32602,
 * -32022 as the SDK has them), and marks tools/list `cacheScope: private`: it is answered to an
 * authenticated agent, and what an agent may call is the authorize hook's to decide per agent.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { CallToolResult } from '@modelcontextprotocol/server';

import {
  type AgentIdentity,
  loadServerSdkV2,
  MAX_TOOL_NAME_LENGTH,
  sendWebResponse,
  webRequest,
} from '../../gateway/index.ts';

/** How long a client may keep the platform's tool list (they change only with a new Plaza release). */
export const PLATFORM_TOOLS_TTL_MS = 60_000;

/** The platform's tools as MCP lists them, and a call made for an agent (authorized, receipted, stamped). */
export interface PlatformModernDeps {
  list(): { name: string; description?: string; inputSchema: Record<string, unknown> }[];
  call(identity: AgentIdentity, tool: string, args: unknown): Promise<Record<string, unknown>>;
}

/** One POST of a 2026-07-28 request, its agent authenticated and its body read (`body`); and how its streams end. */
export type PlatformModern = ((
  req: IncomingMessage,
  res: ServerResponse,
  identity: AgentIdentity,
  body: unknown,
) => Promise<void>) & {
  /** Ends the open subscriptions/listen streams (the server is stopping); a later request starts afresh. */
  endStreams(): void;
};

/** Builds the 2026-07-28 leg of `/mcp/p/platform` (see the file's comment). */
export function createPlatformModern(deps: PlatformModernDeps): PlatformModern {
  let handler: Promise<Awaited<ReturnType<typeof build>>> | undefined;

  async function build() {
    const { createMcpHandler, ProtocolError, ProtocolErrorCode, Server } = await loadServerSdkV2();
    return createMcpHandler(
      ({ authInfo }) => {
        const identity = authInfo?.extra?.['identity'] as AgentIdentity;
        const server = new Server(
          { name: 'plaza-platform', version: '1' },
          { capabilities: { tools: { listChanged: false } } },
        );
        server.setRequestHandler('tools/list', () => ({
          tools: deps.list().map((t) => ({ ...t, inputSchema: { ...t.inputSchema, type: 'object' as const } })),
          ttlMs: PLATFORM_TOOLS_TTL_MS,
          cacheScope: 'private' as const,
        }));
        server.setRequestHandler('tools/call', async (request) => {
          const { name } = request.params;
          if (name.length === 0 || name.length > MAX_TOOL_NAME_LENGTH)
            throw new ProtocolError(
              ProtocolErrorCode.InvalidParams,
              `tools/call params.name must be 1 to ${MAX_TOOL_NAME_LENGTH} characters.`,
            );
          // The platform's tools answer in MCP's shape (the SDK v1 types of platform-tools.ts).
          return (await deps.call(identity, name, request.params.arguments ?? {})) as CallToolResult;
        });
        return server;
      },
      // 'auto': JSON, as no platform tool sends anything before its result; a subscriptions/listen
      // stream (nothing to notify) is SSE, streamed until the client leaves or the server stops.
      { legacy: 'reject' },
    );
  }

  const serve = async (req: IncomingMessage, res: ServerResponse, identity: AgentIdentity, body: unknown) => {
    handler ??= build();
    const mcp = await handler;
    const response = await mcp.fetch(webRequest(req, body === undefined ? undefined : JSON.stringify(body)), {
      parsedBody: body,
      authInfo: { token: '', clientId: identity.agentId, scopes: [], extra: { identity } },
    });
    await sendWebResponse(res, response);
  };
  return Object.assign(serve, {
    endStreams() {
      const open = handler;
      handler = undefined;
      if (open)
        void open.then(
          (mcp) => mcp.close().catch(() => undefined),
          () => undefined,
        );
    },
  });
}
