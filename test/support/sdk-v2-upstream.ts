/**
 * A provider on the MCP SDK v2 (`@modelcontextprotocol/server`), which speaks revision 2026-07-28:
 * `createMcpHandler` behind a plain Node HTTP server, either 2026-only (`legacy: 'reject'`) or
 * with the SDK's stateless fallback for clients of the earlier revisions (`legacy: 'stateless'`).
 * tools/list is paged (one tool a page, `nextCursor`), so a client has to follow cursors. With
 * `calls`, tools/call answers `echo` (its `text` argument back) and `confirm` (asks the client to
 * confirm through an elicitation: on 2026-07-28 an `input_required` result, which a request whose
 * `_meta` declares no elicitation capability gets as the error -32021 instead).
 * With `features`, it also serves a resource (`v2://notes/first`), a template (`v2://notes/{id}`), a
 * prompt (`greet {name}`, whose `name` completes) and a tool `echo {text}`.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createMcpHandler, inputRequired, Server } from '@modelcontextprotocol/server';

/** One request the provider received: its JSON-RPC method (or HTTP verb), MCP headers and `_meta`. */
export interface SeenV2 {
  method: string;
  headers: IncomingHttpHeaders;
  meta: Record<string, unknown> | undefined;
  params: Record<string, unknown> | undefined;
  /** The HTTP status it was answered with. */
  status: number;
}

/** A running SDK v2 provider. */
export interface SdkV2Upstream {
  url: string;
  seen: SeenV2[];
  close(): Promise<void>;
}

/** Starts an SDK v2 provider whose tools/list answers `pages`, one page per cursor. */
export async function startSdkV2Upstream(options: {
  legacy: 'reject' | 'stateless';
  pages: { name: string; description?: string }[][];
  name?: string;
  /** Serve tools/call (see the file's comment). */
  calls?: boolean;
  /** Serve resources, a template, a prompt with completion and `echo` (see the file's comment). */
  features?: boolean;
}): Promise<SdkV2Upstream> {
  const factory = () => {
    const server = new Server(
      { name: options.name ?? 'sdk-v2-upstream', version: '2.4.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: {},
          ...(options.features ? { prompts: {}, completions: {} } : {}),
        },
      },
    );
    server.setRequestHandler('tools/list', (request) => {
      const index = Number(request.params?.cursor ?? 0);
      const tools = (options.pages[index] ?? []).map((t) => ({ inputSchema: { type: 'object' as const }, ...t }));
      return { tools, ...(index + 1 < options.pages.length ? { nextCursor: String(index + 1) } : {}) };
    });
    if (options.calls)
      server.setRequestHandler('tools/call', (request, ctx) => {
        const args = request.params.arguments ?? {};
        if (request.params.name !== 'confirm')
          return { content: [{ type: 'text' as const, text: `echo: ${String(args['text'])}` }] };
        const answered = ctx.mcpReq.inputResponses?.['confirm'] as { action?: string } | undefined;
        if (answered) return { content: [{ type: 'text' as const, text: `confirmed: ${answered.action}` }] };
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: 'Go ahead?',
              requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
            }),
          },
        });
      });
    if (!options.features) {
      server.setRequestHandler('resources/list', () => ({ resources: [] }));
      return server;
    }
    addFeatures(server);
    return server;
  };
  const handler = createMcpHandler(factory, { legacy: options.legacy });
  const seen: SeenV2[] = [];
  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let body: { method?: string; params?: Record<string, unknown> } | undefined;
    try {
      body = raw === '' ? undefined : (JSON.parse(raw) as typeof body);
    } catch {
      body = undefined;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const response = await handler.fetch(
      new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        ...(req.method === 'POST' ? { body: raw } : {}),
      }),
    );
    seen.push({
      method: body?.method ?? req.method ?? '',
      headers: req.headers,
      meta: body?.params?.['_meta'] as Record<string, unknown> | undefined,
      params: body?.params,
      status: response.status,
    });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    seen,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The resources, template, prompt, completion and `echo` tool of a provider started with `features`. */
function addFeatures(server: Server): void {
  server.setRequestHandler('tools/call', (request) => ({
    content: [{ type: 'text', text: `v2 echo: ${String(request.params.arguments?.['text'] ?? '')}` }],
  }));
  server.setRequestHandler('resources/list', () => ({
    resources: [{ uri: 'v2://notes/first', name: 'first', mimeType: 'text/plain' }],
  }));
  server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: [{ uriTemplate: 'v2://notes/{id}', name: 'note', mimeType: 'text/plain' }],
  }));
  server.setRequestHandler('resources/read', (request) => ({
    contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: `note at ${request.params.uri}` }],
  }));
  server.setRequestHandler('prompts/list', () => ({
    prompts: [{ name: 'greet', arguments: [{ name: 'name', required: true }] }],
  }));
  server.setRequestHandler('prompts/get', (request) => ({
    messages: [
      { role: 'user', content: { type: 'text', text: `Hello, ${String(request.params.arguments?.['name'] ?? '')}!` } },
    ],
  }));
  server.setRequestHandler('completion/complete', (request) => ({
    completion: {
      values: ['Ada', 'Alan', 'Grace'].filter((v) => v.startsWith(String(request.params.argument.value))),
    },
  }));
}
