/**
 * An agent's MCP session through the gateway: the SDK client connected to an endpoint with the
 * agent's bearer token, and the headers that send raw requests in the same session.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface AgentSession {
  client: Client;
  /** Authorization, content type, accept, session id and protocol version of this session. */
  headers: Record<string, string>;
}

/** Connects the SDK client to `endpoint` (e.g. `<plaza>/mcp/p/<provider>`) as the agent holding `token`. */
export async function agentSession(endpoint: string, token: string, name = 'test-agent'): Promise<AgentSession> {
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  const headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': transport.sessionId!,
    'mcp-protocol-version': transport.protocolVersion!,
  };
  return { client, headers };
}
