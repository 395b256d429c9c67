/**
 * A provider on the MCP SDK v2 (`@modelcontextprotocol/server`), which speaks revision 2026-07-28:
 * `createMcpHandler` behind a plain Node HTTP server, either 2026-only (`legacy: 'reject'`) or
 * with the SDK's stateless fallback for clients of the earlier revisions (`legacy: 'stateless'`).
 * tools/list is paged (one tool a page, `nextCursor`), so a client has to follow cursors. By default tools/call
 * of any tool answers its name and arguments as text (after one progress notification when the
 * call carries a progress token), but `ask`, which first answers `input_required` (state only),
 * `confirm`, which asks its client to confirm (elicitation) and answers `confirmed <ok>`, and
 * `slow {ms}`, which answers after `ms` unless cancelled (counted in `slow`).
 * With `calls` instead, tools/call answers `echo` (its `text` argument back) and `confirm` (an
 * `input_required` elicitation without state; a request whose `_meta` declares no elicitation
 * capability gets -32021), answered `confirmed: <action>`. With `features`, it serves a resource
 * (`v2://notes/first`), a template (`v2://notes/{id}`), a prompt (`greet {name}`, whose `name`
 * completes) and a tool `echo {text}`.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

import {
  acceptedContent,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  type McpHttpHandler,
  McpServer,
  Server,
  type ServerNotifier,
} from '@modelcontextprotocol/server';

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
  /** `slow` calls started, stopped by a cancellation, and run to their end. */
  slow: { started: number; aborted: number; done: number };
  /** Publishes list changes to the open subscriptions/listen streams. */
  notify: ServerNotifier;
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
  const slow = { started: 0, aborted: 0, done: 0 };
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
    if (options.features) {
      addFeatures(server);
      return server;
    }
    server.setRequestHandler('resources/list', () => ({ resources: [] }));
    if (options.calls) {
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
      return server;
    }
    // Every listed tool echoes its name and arguments, after one progress notification when asked for one.
    server.setRequestHandler('tools/call', async (request, ctx) => {
      // `ask` answers input_required (state only) until it is retried with that state.
      if (request.params.name === 'ask' && ctx.mcpReq.requestState() !== 'ask-1')
        return inputRequired({ requestState: 'ask-1' }) as never;
      // `slow {ms}` answers after `ms` unless its request is cancelled (its stream closed) first.
      if (request.params.name === 'slow') {
        const ms = Number((request.params.arguments as { ms?: unknown } | undefined)?.ms ?? 10_000);
        const signal = ctx.mcpReq.signal;
        slow.started++;
        const stopped = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), ms);
          signal.addEventListener('abort', () => (clearTimeout(timer), resolve(true)), { once: true });
        });
        slow[stopped ? 'aborted' : 'done']++;
        return { content: [{ type: 'text' as const, text: stopped ? 'stopped' : 'slept' }] };
      }
      // `confirm` asks its client (elicitation) until it is retried with the answer.
      if (request.params.name === 'confirm') {
        const answer = acceptedContent<{ ok?: boolean }>(ctx.mcpReq.inputResponses, 'confirm');
        if (answer === undefined)
          return inputRequired({
            inputRequests: {
              confirm: inputRequired.elicit({
                message: 'Go ahead?',
                requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
              }),
            },
            requestState: 'confirm-1',
          }) as never;
        return { content: [{ type: 'text' as const, text: `confirmed ${String(answer.ok)}` }] };
      }
      const token = request.params._meta?.progressToken;
      if (token !== undefined)
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1, total: 2, message: 'halfway' },
        });
      return {
        content: [
          { type: 'text' as const, text: `${request.params.name} ${JSON.stringify(request.params.arguments ?? {})}` },
        ],
      };
    });
    return server;
  };
  return { ...(await serve(createMcpHandler(factory, { legacy: options.legacy }))), slow };
}

/**
 * A 2026-only provider on the SDK v2's `McpServer`, whose tool registry knows each tool's input
 * schema: `geo {region, n}` marks `region` with `x-mcp-header: "Region"`, so the server refuses
 * (-32020) a call without a matching `Mcp-Param-Region` header. It answers its arguments as text.
 */
export async function startSdkV2HeaderUpstream(): Promise<SdkV2Upstream> {
  const schema = {
    type: 'object',
    properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, n: { type: 'integer' } },
  };
  const factory = () => {
    const server = new McpServer({ name: 'sdk-v2-geo', version: '2.4.0' });
    server.registerTool('geo', { inputSchema: fromJsonSchema(schema as never) }, async (args: unknown) => ({
      content: [{ type: 'text' as const, text: JSON.stringify(args) }],
    }));
    return server;
  };
  return serve(createMcpHandler(factory, { legacy: 'reject' }));
}

/** Serves `handler` on a Node HTTP server on a free port, recording each request. */
async function serve(handler: McpHttpHandler): Promise<SdkV2Upstream> {
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
    // A client that closes its request's stream cancels it (2026-07-28 over HTTP): the handler is told.
    const closed = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) closed.abort();
    });
    const response = await handler.fetch(
      new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        signal: closed.signal,
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
    // Streamed as it comes: a subscriptions/listen stream lasts until either side ends it.
    if (response.body) {
      req.socket.once('close', () => void response.body?.cancel().catch(() => undefined));
      try {
        for await (const chunk of response.body) res.write(chunk);
      } catch {
        // The client went away.
      }
    }
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    seen,
    slow: { started: 0, aborted: 0, done: 0 },
    notify: handler.notify,
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
