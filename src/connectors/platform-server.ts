import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

import type { AgentAuthenticator, AgentIdentity, Authorize, ReceiptSink } from '../../gateway/index.ts';
import {
  BODY_REFUSED,
  claimedRevision,
  createCallPipeline,
  GatewayError,
  isModernRevision,
  loadServerSdk,
  MAX_TOOL_NAME_LENGTH,
  readMessageBody,
  sendGatewayError,
  serveOnce,
} from '../../gateway/index.ts';
import type { Clock } from '../kernel/index.ts';
import { createPlatformModern } from './platform-modern.ts';
import { PLATFORM_PROVIDER, type PlatformTools } from './platform-tools.ts';

/** Options of createPlatformServer. */
export interface PlatformServerOptions {
  tools: PlatformTools;
  agents: AgentAuthenticator;
  /** Whether an agent may make a call (see Authorize); default: every call is allowed. */
  authorize?: Authorize;
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
  const { tools } = options;
  // No assertion key: the platform's calls never leave the process.
  const pipeline = createCallPipeline({
    agents: options.agents,
    authorize: options.authorize,
    receipts: options.receipts,
    clock: options.clock,
  });
  /**
   * Runs one call, authorized, traced and receipted like every gateway call (one span and one
   * receipt, with the same outcome); its result stamped. The receipt is written before the result leaves.
   */
  async function call(identity: AgentIdentity, tool: string, args: unknown): Promise<CallToolResult> {
    const authorization = await pipeline.authorize({
      identity,
      provider: PLATFORM_PROVIDER,
      method: 'tools/call',
      tool,
      annotations: () => tools.catalog().find((t) => t.name === tool)?.annotations,
    });
    const context = pipeline.open({ identity, provider: PLATFORM_PROVIDER, tool, path: 'passthrough' });
    if (!authorization.allowed) {
      const why = `${pipeline.refusal(authorization)}; nothing was called`;
      await pipeline.record(context, { refused: why });
      return pipeline.stamp(context, {
        content: [{ type: 'text', text: `${why[0]!.toUpperCase()}${why.slice(1)}.` }],
        isError: true,
      }) as CallToolResult;
    }
    const result = await tools.call(identity, tool, args);
    await pipeline.record(context, { result });
    return pipeline.stamp(context, result) as CallToolResult;
  }

  const list = () =>
    tools.catalog().map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: { type: 'object' as const, ...t.inputSchema },
      annotations: t.annotations,
    }));
  const modern = createPlatformModern({ list, call });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A credential that cannot be checked (storage down) throws on, as before: the app's handler answers it.
    const identity = await pipeline.admit(req, res, { provider: PLATFORM_PROVIDER });
    if (!identity) return;
    if (req.method === 'GET') {
      // Stateless, and with nothing to notify: a GET stream would stay open and carry nothing (and
      // hold a stopping server for its whole drain time). The spec's answer for no stream is 405.
      sendGatewayError(
        res,
        new GatewayError(
          'sdk_method_not_allowed',
          'Method not allowed: the platform connector sends no server-initiated messages, so it offers no GET stream.',
        ),
        { allow: 'POST' },
      );
      return;
    }
    // Read here, not by the SDK's transport, so a body is refused in the words of every other /mcp/p/<provider>.
    const read = await readMessageBody(req, res, JSON.parse);
    if (read === BODY_REFUSED) return;
    // A request of 2026-07-28 (its `_meta` or its MCP-Protocol-Version says so) goes to the SDK v2 server.
    const version = req.headers['mcp-protocol-version'];
    if (isModernRevision(claimedRevision(read?.body)) || isModernRevision(version)) {
      await modern(req, res, identity, read?.body);
      return;
    }
    const sdk = await loadServerSdk();
    const server = new sdk.Server(
      { name: 'plaza-platform', version: '1' },
      { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: sdk.jsonSchemaValidator },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: list() }));
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
      return call(identity, name, request.params.arguments ?? {});
    });
    await serveOnce(sdk, server, req, res, read?.body);
  }

  return {
    handle,
    /** Ends the open 2026-07-28 subscription streams: the server is stopping. */
    endStreams: () => modern.endStreams(),
    /** The aggregate's view: tools listed as `platform__<tool>`, called in-process. */
    local: {
      provider: PLATFORM_PROVIDER,
      tools: () => tools.catalog(),
      // The aggregate writes the receipt itself, so this path skips `call`'s.
      call: (identity: AgentIdentity, tool: string, args: unknown) => tools.call(identity, tool, args),
    },
  };
}
