/**
 * A recording CRM provider for the policy tests: a stateless streamable-HTTP server on the MCP
 * SDK's McpServer with three tools whose annotations differ (`read_contacts` read-only,
 * `delete_contact` destructive, `send_mail` saying nothing), noting the name of every tool it is
 * asked to run, so a test proves what reached it and what did not.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** The provider: its URL, the tools it ran (in order), and how to stop it. */
export interface RecordingCrm {
  url: string;
  called: string[];
  close(): Promise<void>;
}

/** Starts the provider on 127.0.0.1. */
export async function startRecordingCrm(): Promise<RecordingCrm> {
  const called: string[] = [];
  const build = () => {
    const server = new McpServer({ name: 'crm', version: '1.0.0' });
    const tool = (name: string, annotations: Record<string, boolean> | undefined) =>
      server.registerTool(name, { description: `CRM ${name}`, ...(annotations ? { annotations } : {}) }, async () => {
        called.push(name);
        return { content: [{ type: 'text' as const, text: `ran ${name}` }] };
      });
    tool('read_contacts', { readOnlyHint: true });
    tool('delete_contact', { destructiveHint: true });
    tool('send_mail', undefined);
    return server;
  };
  const http: Server = createServer(async (req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = build();
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    called,
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}
