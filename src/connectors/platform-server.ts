import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

import type { AgentAuthenticator, AgentIdentity, ReceiptSink } from '../../gateway/index.ts';
import {
  BODY_REFUSED,
  loadServerSdk,
  MAX_TOOL_NAME_LENGTH,
  readMessageBody,
  recordCall,
  sendUnauthorized,
  serveOnce,
  stampResult,
  traceCall,
} from '../../gateway/index.ts';
import { AuthError, type Clock, newId } from '../kernel/index.ts';
import { PLATFORM_PROVIDER, type PlatformTools } from './platform-tools.ts';

/** Options of createPlatformServer. */
export interface PlatformServerOptions {
  tools: PlatformTools;
  agents: AgentAuthenticator;
  receipts: ReceiptSink;
  clock: Clock;
}

/**
 * Plaza's own MCP server at `/mcp/p/platform`: an in-process MCP server (stateless streamable
 * HTTP, like `/mcp`) whose tools act for the account that owns the calling agent. The agent
 * authenticates as on every gateway route (Bearer agent token); each call leaves a receipt and its
 * result carries `_meta.platform` like any connector's.
 */
export function createPlatformServer(options: PlatformServerOptions) {
  const { tools, agents, clock } = options;
  /** Runs one call with a receipt; shared with the `/mcp` aggregate (as `platform__<tool>`). */
  async function call(identity: AgentIdentity, tool: string, args: unknown, callId = newId('call', clock.now())) {
    const context = { callId, identity, provider: PLATFORM_PROVIDER, tool, startedAt: clock.now() };
    // Traced and recorded like every gateway call: one span and one receipt, with the same outcome.
    traceCall(context, 'passthrough');
    const result = await tools.call(identity, tool, args);
    await recordCall(options.receipts, context, { result }, clock.now());
    return result;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let identity: AgentIdentity;
    try {
      const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!match?.[1]) throw new AuthError('Send the agent credential as Authorization: Bearer <agent token>.');
      identity = await agents.authenticate(match[1], { provider: PLATFORM_PROVIDER });
    } catch (error) {
      if (!(error instanceof AuthError)) throw error;
      await sendUnauthorized(req, res, error, agents.resourceMetadataUrl?.({ provider: PLATFORM_PROVIDER }));
      return;
    }
    if (req.method === 'GET') {
      // Stateless, and with nothing to notify: a GET stream would stay open and carry nothing (and
      // hold a stopping server for its whole drain time). The spec's answer for no stream is 405.
      res.writeHead(405, { 'content-type': 'application/json', allow: 'POST' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32000,
            message:
              'Method not allowed: the platform connector sends no server-initiated messages, so it offers no GET stream.',
          },
        }),
      );
      return;
    }
    // Read here, not by the SDK's transport, so a body is refused in the words of every other /mcp/p/<provider>.
    const read = await readMessageBody(req, res, JSON.parse);
    if (read === BODY_REFUSED) return;
    const sdk = await loadServerSdk();
    const server = new sdk.Server(
      { name: 'plaza-platform', version: '1' },
      { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: sdk.jsonSchemaValidator },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.catalog().map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: { type: 'object' as const, ...t.inputSchema },
        annotations: t.annotations,
      })),
    }));
    // Every tools/call reaches `call`, which answers an unknown tool or bad arguments in-band: each
    // gets a receipt, as on any other connector (and as `platform__<tool>` on /mcp).
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      // A name no receipt can hold is refused as a request, as on every connector.
      const { name } = request.params;
      if (name.length === 0 || name.length > MAX_TOOL_NAME_LENGTH)
        throw new McpError(
          ErrorCode.InvalidParams,
          `tools/call params.name must be 1 to ${MAX_TOOL_NAME_LENGTH} characters.`,
        );
      const callId = newId('call', clock.now());
      // The receipt is written before the result leaves, as for every gateway call.
      return stampResult(
        await call(identity, request.params.name, request.params.arguments ?? {}, callId),
        identity,
        callId,
      ) as CallToolResult;
    });
    await serveOnce(sdk, server, req, res, read?.body);
  }

  return {
    handle,
    /** The aggregate's view: tools listed as `platform__<tool>`, called in-process. */
    local: {
      provider: PLATFORM_PROVIDER,
      tools: () => tools.catalog(),
      // The aggregate writes the receipt itself, so this path skips `call`'s.
      call: (identity: AgentIdentity, tool: string, args: unknown) => tools.call(identity, tool, args),
    },
  };
}
