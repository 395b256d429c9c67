import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

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
  ]).then(([server, http, ajv]) => ({ Server: server.Server, StreamableHTTPServerTransport: http.StreamableHTTPServerTransport, jsonSchemaValidator: new ajv.AjvJsonSchemaValidator() }));
  return sdk;
}
