/**
 * `/mcp` for the 2025 revisions (2025-11-25 and the earlier ones clients negotiate): SDK v1's
 * Server, built per request on a stateless transport (any instance answers any request), with
 * `/mcp`'s methods. A call's progress and log messages go on its POST's event stream; a 2025
 * client's notifications/cancelled is taken before the SDK sees it (see aggregate.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

import type { AgentIdentity } from '../identity/agin-card.ts';
import { loadServerSdk, serveOnce } from '../server-sdk.ts';
import type { Cancellations } from './cancellation.ts';
import { AGGREGATE_CAPABILITIES, type MethodHandler } from './methods.ts';

const SCHEMAS = {
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  'prompts/list': ListPromptsRequestSchema,
  'prompts/get': GetPromptRequestSchema,
  'completion/complete': CompleteRequestSchema,
} as const;

/** What the 2025 server uses. */
export interface LegacyServerDeps {
  methods: Record<string, MethodHandler>;
  serverInfo: { name: string; version: string };
  cancellations: Cancellations;
}

/** Answers one 2025-revision request (its body read already) with a Server of its own. */
export async function serveLegacy(
  deps: LegacyServerDeps,
  identity: AgentIdentity,
  req: IncomingMessage,
  res: ServerResponse,
  parsedBody: unknown,
): Promise<void> {
  const sdk = await loadServerSdk();
  const server = new sdk.Server(deps.serverInfo, {
    // No GET stream (stateless): no list change reaches a 2025 client, so none is declared.
    capabilities: { tools: { listChanged: true }, ...AGGREGATE_CAPABILITIES },
    jsonSchemaValidator: sdk.jsonSchemaValidator,
  });
  for (const [method, schema] of Object.entries(SCHEMAS)) {
    const handler = deps.methods[method]!;
    server.setRequestHandler(schema as typeof ListToolsRequestSchema, async (request, extra) => {
      // Cancelled by a notifications/cancelled (wherever it arrived) or the SDK's own signal.
      const controller = new AbortController();
      const release = deps.cancellations.track(identity.agentId, extra.requestId, controller);
      const follow = () => controller.abort(extra.signal.reason);
      if (extra.signal.aborted) follow();
      else extra.signal.addEventListener('abort', follow, { once: true });
      try {
        return (await handler((request.params ?? {}) as Record<string, unknown>, {
          identity,
          req,
          res,
          signal: controller.signal,
          notify: (n) => extra.sendNotification(n as never),
        })) as never;
      } finally {
        release();
        extra.signal.removeEventListener('abort', follow);
      }
    });
  }
  await serveOnce(sdk, server, req, res, parsedBody);
}
