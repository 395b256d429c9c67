import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { $ZodError } from 'zod/v4/core';

/** The MCP SDK's server half, as the gateway's own servers (`/mcp`, `/mcp/p/platform`) build theirs per request. */
export interface ServerSdk {
  Server: typeof Server;
  StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport;
  /** One validator for every request's Server: each would otherwise build its own Ajv. */
  jsonSchemaValidator: AjvJsonSchemaValidator;
}

let sdk: Promise<ServerSdk> | undefined;

/** Loads the SDK's server half on first use, not at start-up (~0.2 s), once per process. */
export function loadServerSdk(): Promise<ServerSdk> {
  sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
  ]).then(([server, http, ajv]) => ({
    Server: server.Server,
    StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
    jsonSchemaValidator: new ajv.AjvJsonSchemaValidator(),
  }));
  return sdk;
}

/** A validator's issues as one line: `params.name: expected string; params.arguments: …`. */
export function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const shown = issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(message)'}: ${issue.message}`);
  return shown.join('; ') + (issues.length > 3 ? ` (and ${issues.length - 3} more)` : '');
}

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * Makes `server` answer a request whose params its method's schema refuses (an object as
 * tools/list's cursor, a number as initialize's protocolVersion) with -32602 Invalid params in one
 * line, as JSON-RPC names that case, instead of the SDK's -32603 Internal error carrying the
 * validator's whole dump. Call it after the last `setRequestHandler`: it wraps the handlers set so
 * far (the SDK's own initialize and ping included). Only the SDK's schema check, which throws before
 * a handler runs, is mapped; a handler's own failures pass through as they were.
 */
export function answerInvalidParams(server: Server): void {
  // The SDK keeps its handlers in this (TypeScript-private) map and offers no hook for the schema
  // check; the SDK's version is pinned by the lockfile, and a test covers this per method.
  const handlers = (server as unknown as { _requestHandlers: Map<string, RequestHandler> })._requestHandlers;
  for (const [method, handler] of handlers) {
    handlers.set(method, (request, extra) => {
      try {
        return handler(request, extra);
      } catch (error) {
        // Thrown with a code rather than as McpError, whose message would repeat the code.
        if (error instanceof $ZodError)
          throw Object.assign(new Error(`Invalid params for ${method}: ${describeIssues(error.issues)}`), {
            code: ErrorCode.InvalidParams,
          });
        throw error;
      }
    });
  }
}

/**
 * Answers one HTTP request with `server` (its handlers all set) on a stateless transport of its
 * own, refused params mapped to -32602 (answerInvalidParams); both close when the response does.
 */
export async function serveOnce(
  sdk: ServerSdk,
  server: Server,
  req: IncomingMessage,
  res: ServerResponse,
  parsedBody?: unknown,
): Promise<void> {
  answerInvalidParams(server);
  const transport = new sdk.StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    // Closing after the response ended: a failure there leaves nothing to undo and no one to tell.
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsedBody);
}
