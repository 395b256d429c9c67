/**
 * A misbehaving streamable-HTTP MCP provider for fault tests. `initialize` and `tools/list` are
 * answered correctly (so probes find it healthy and the gateway routes to it), while `tools/call`
 * does what the path says:
 *
 * - `/ok/mcp`: answers after `delayMs` (query `?delay=`), echoing the arguments;
 * - `/hang/mcp`: accepts the request and never sends a byte;
 * - `/drip/mcp`: sends SSE headers, then one byte every 200 ms, forever;
 * - `/malformed/mcp`: 200 `application/json` that is not JSON-RPC;
 * - `/sse-cut/mcp`: starts an SSE answer, sends half an event and drops the connection;
 * - `/huge/mcp`: a well-formed 50 MB JSON-RPC result, streamed;
 * - `/gated-call/mcp`: 401 unless the call brings `Authorization: Bearer call-secret` (lists tools for anyone);
 * - `/other-error/mcp`, `/other-redirect/mcp`, `/other-cut/mcp` (OTHER_FAILURES): a request other than a
 *   call (prompts/list) gets HTTP 500 with a result, a redirect without Location, or half an SSE event;
 * - `/forge-get/mcp`: a GET stream with a notification and an answer under id 2 nobody asked;
 * - `/guessed-after/mcp`: the call's answer and, in the same write, a forged one under id 1;
 * - `/other-forged/mcp`: prompts/list refused with a 400 holding a result under id 2;
 * - `/flood/mcp` tools/call: notifications as fast as they are read, never an answer;
 * - `/big-numbers/mcp`: a result whose structuredContent holds integers past 2^53, as written;
 * - `/flood/mcp`: a GET notification stream of 1 MiB events, written as fast as it is read (FLOOD_BYTES in all);
 * - `/echo-credential/mcp`: refuses the call quoting the Authorization it got, as a JSON-RPC error
 *   (argument `as: "error"`) or an `isError` result;
 * - odd answers (`ODD_ANSWERS`): an error whose message is an object, `"error": null`, HTTP 202,
 *   a result that is a number, content of an unknown type, a result nested 100,000 levels deep,
 *   a forged success under id 1 (a caller's id guessed; as JSON, and as the only event of an SSE
 *   answer) instead of the call's id, a result under an id nobody sent, `null`, a request under
 *   the call's id.
 *
 * It records every request (headers and body) it receives, for spoofing checks.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the provider received. */
export interface SeenRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** The body as it came, before JSON.parse rounded anything. */
  raw: string;
}

/** A running fault provider. */
export interface FaultUpstream {
  base: string;
  /** `${base}/<mode>/mcp`. */
  url(
    mode:
      | 'ok'
      | 'hang'
      | 'drip'
      | 'malformed'
      | 'sse-cut'
      | 'huge'
      | 'gated-call'
      | 'echo-credential'
      | 'flood'
      | 'big-numbers'
      | 'forge-get'
      | 'guessed-after'
      | 'other-forged'
      | 'sessionless'
      | OtherFailure
      | OddAnswer,
  ): string;
  seen: SeenRequest[];
  /** Bytes `/flood/mcp`'s GET streams have written so far (their reader taking them, or its buffers). */
  flood: { sent: number };
  close(): Promise<void>;
}

export const HUGE_BYTES = 50 * 1024 * 1024;
/**
 * What `/flood/mcp`'s GET stream writes in all, 1 MiB events: well beyond what the sockets between
 * provider, Plaza and client hold once the kernel has grown their buffers (loopback autotuning
 * held 12 MiB within 1.5 s on a machine whose tcp_rmem allows 32 MiB a socket).
 */
export const FLOOD_BYTES = 64 * 1024 * 1024;

/** Modes where requests other than initialize, tools/list and tools/call fail: HTTP 500 (with a result), a redirect, an SSE answer cut short. */
export const OTHER_FAILURES = ['other-error', 'other-redirect', 'other-cut'] as const;
export type OtherFailure = (typeof OTHER_FAILURES)[number];

/** Modes whose tools/call answer is not a usable result, each in its own way. */
export const ODD_ANSWERS = [
  'bad-error',
  'null-error',
  'accepted',
  'not-object',
  'bad-content',
  'deep',
  'guessed-id',
  'guessed-id-sse',
  'wrong-id',
  'null-body',
  'request-under-call-id',
  'null-id-error',
] as const;
export type OddAnswer = (typeof ODD_ANSWERS)[number];

/** Starts the provider on 127.0.0.1. */
export async function startFaultUpstream(): Promise<FaultUpstream> {
  const seen: SeenRequest[] = [];
  const flood = { sent: 0 };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const mode = /^\/([a-z-]+)\/mcp$/.exec(url.pathname)?.[1];
    if (!mode) return res.writeHead(404).end();
    if (req.method === 'GET' && mode === 'forge-get') {
      // A notification stream carrying, besides a notification, an answer under a caller's id.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hello' } })}\n\n`,
      );
      return res.end(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'FORGED' }] } })}\n\n`,
      );
    }
    if (req.method === 'GET' && mode === 'flood') {
      // A notification stream that writes as fast as its reader takes it, up to FLOOD_BYTES.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(1024 * 1024) } })}\n\n`;
      const pump = () => {
        while (flood.sent < FLOOD_BYTES) {
          flood.sent += event.length;
          if (!res.write(event)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
      return;
    }
    if (req.method !== 'POST' && mode === 'sessionless') {
      // As server-everything answers a GET or DELETE without a session: an error with no id at all.
      return res
        .writeHead(400, { 'content-type': 'application/json; charset=utf-8' })
        .end('{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}');
    }
    if (req.method !== 'POST') return res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let message: { id?: number; method?: string; params?: any };
    try {
      message = JSON.parse(raw);
    } catch {
      return res.writeHead(400).end();
    }
    if (typeof message !== 'object' || message === null) return res.writeHead(400).end();
    // A batch sent to /other-forged/mcp is answered under an id none of its requests has.
    if (Array.isArray(message) && mode === 'other-forged')
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify([{ jsonrpc: '2.0', id: 'x', result: {} }]));
    seen.push({ path: url.pathname, headers: req.headers, body: message, raw });
    if (message.id === undefined) return res.writeHead(202).end();
    const reply = (result: unknown) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    if (message.method === 'initialize') {
      return reply({
        protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: `fault-${mode}`, version: '1' },
      });
    }
    if (message.method === 'tools/list') {
      return reply({
        tools: [
          {
            name: 'act',
            description: `Fault mode ${mode}`,
            inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
          },
        ],
      });
    }
    if (message.method === 'prompts/list' && mode === 'other-forged') {
      // Refused with a 400 whose body is a result under another id (a batch: see above).
      return res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'FORGED' }] } }));
    }
    if (message.method === 'prompts/list' && mode?.startsWith('other-')) {
      // A request other than a call (prompts/list; the probe sends ping) fails as the mode says.
      if (mode === 'other-error')
        return res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }));
      if (mode === 'other-redirect') return res.writeHead(302).end();
      if (mode === 'other-cut') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"res`);
        setTimeout(() => res.destroy(), 50);
        return;
      }
    }
    if (message.method !== 'tools/call') {
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
    }
    switch (mode) {
      case 'ok': {
        const delay = Number(url.searchParams.get('delay') ?? 0);
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        return reply({
          content: [{ type: 'text', text: `ok: ${JSON.stringify(message.params?.arguments ?? {})}` }],
          isError: false,
        });
      }
      case 'gated-call':
        if (req.headers.authorization !== 'Bearer call-secret')
          return res.writeHead(401, { 'www-authenticate': 'Bearer realm="fault"' }).end();
        return reply({ content: [{ type: 'text', text: 'ok: let in' }], isError: false });
      case 'hang':
        return; // never answers; the connection stays open until the client gives up
      case 'drip': {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const timer = setInterval(() => res.write(':'), 200);
        timers.add(timer);
        res.on('close', () => (clearInterval(timer), timers.delete(timer)));
        return;
      }
      case 'malformed':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"jsonrpc":"2.0","id":' + message.id + ',"result":');
      case 'sse-cut':
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: message\ndata: {"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"te`);
        setTimeout(() => res.destroy(), 50);
        return;
      case 'huge': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const head = `{"jsonrpc":"2.0","id":${message.id},"result":{"isError":false,"content":[{"type":"text","text":"`;
        res.write(head);
        const block = 'x'.repeat(64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < HUGE_BYTES) {
            sent += block.length;
            if (!res.write(block)) return void res.once('drain', pump);
          }
          res.end('"}]}}');
        };
        res.on('error', () => undefined);
        pump();
        return;
      }
      case 'bad-error':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: { x: 1 } } }));
      case 'null-error':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: null }));
      case 'accepted':
        return res.writeHead(202).end();
      case 'not-object':
        return reply(5);
      case 'bad-content':
        return reply({ content: [{ type: 'bogus' }] });
      case 'deep':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            `{"jsonrpc":"2.0","id":${message.id},"result":{"content":[],"structuredContent":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`,
          );
      case 'big-numbers':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text","text":"big"}],"structuredContent":{"n":123456789012345678901234567890,"id":9007199254740993123}}}`,
          );
      case 'echo-credential': {
        const quoted = `the token ${req.headers.authorization ?? 'none'} is not valid here`;
        if (message.params?.arguments?.as === 'error')
          return res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32001, message: quoted } }));
        return reply({ content: [{ type: 'text', text: quoted }], isError: true });
      }
      case 'null-id-error':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      case 'guessed-after':
        // The call's answer, then in the same write a forged one under the caller's id 1.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return res.end(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'real' }] } })}\n\n` +
            `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'FORGED' }] } })}\n\n`,
        );
      case 'flood': {
        // Notifications as fast as they are read (1 MiB each, FLOOD_BYTES in all), and no answer.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const event = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'y'.repeat(1024 * 1024) } })}\n\n`;
        let sent = 0;
        const pump = () => {
          while (sent < FLOOD_BYTES && !res.destroyed) {
            sent += event.length;
            if (!res.write(event)) return void res.once('drain', pump);
          }
        };
        res.on('error', () => undefined);
        pump();
        return;
      }
      case 'guessed-id':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'FORGED' }] } }));
      case 'guessed-id-sse':
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return res.end(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'FORGED' }] } })}\n\n`,
        );
      case 'wrong-id':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: 'nope', result: { content: [] } }));
      case 'null-body':
        return res.writeHead(200, { 'content-type': 'application/json' }).end('null');
      case 'request-under-call-id':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, method: 'x', result: { content: [] } }));
      default:
        return res.writeHead(404).end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    url: (mode) => `${base}/${mode}/mcp`,
    seen,
    flood,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
