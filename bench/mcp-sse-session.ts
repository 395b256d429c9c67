/**
 * A client of MCP's older HTTP+SSE transport for the gateway benchmark, for peers that serve only
 * it (`mcp-hub` 4.x: GET /mcp opens the event stream, its first `endpoint` event names the URL to
 * POST messages to, and every answer comes back as a `message` event on the stream). One session
 * is one stream; `call` posts a request and resolves with the answer of the same id.
 */
import type { Agent } from 'undici';
import { request } from 'undici';

/** One open HTTP+SSE session. */
export interface SseSession {
  /** Sends a JSON-RPC request and resolves with its answer (the parsed JSON-RPC message). */
  call(method: string, params: unknown): Promise<Record<string, unknown>>;
  /** Sends a JSON-RPC notification. */
  notify(method: string): Promise<void>;
  close(): void;
}

let nextId = 0;

/** Opens a session at `url` (the GET endpoint) through `dispatcher` and initialises it. */
export async function openSseSession(url: string, dispatcher: Agent, protocolVersion: string): Promise<SseSession> {
  const abort = new AbortController();
  const stream = await request(url, {
    method: 'GET',
    headers: { accept: 'text/event-stream' },
    dispatcher,
    signal: abort.signal,
  });
  if (stream.statusCode !== 200) throw new Error(`GET ${url} answered ${stream.statusCode}`);
  const pending = new Map<number, (message: Record<string, unknown>) => void>();
  let endpoint: ((value: string) => void) | undefined;
  const endpointUrl = new Promise<string>((resolve) => (endpoint = resolve));
  void (async () => {
    let buffer = '';
    try {
      for await (const chunk of stream.body) {
        buffer += (chunk as Buffer).toString('utf8');
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('\n');
          if (event === 'endpoint') endpoint?.(new URL(data, url).href);
          else if (event === 'message') {
            const message = JSON.parse(data) as Record<string, unknown>;
            const waiting = pending.get(message['id'] as number);
            if (waiting) {
              pending.delete(message['id'] as number);
              waiting(message);
            }
          }
        }
      }
    } catch {
      // closed
    }
  })();
  const postUrl = await endpointUrl;
  const post = async (body: unknown) => {
    const res = await request(postUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      dispatcher,
    });
    await res.body.dump();
    if (res.statusCode >= 300) throw new Error(`POST ${postUrl} answered ${res.statusCode}`);
  };
  const session: SseSession = {
    async call(method, params) {
      const id = ++nextId;
      const answer = new Promise<Record<string, unknown>>((resolve) => pending.set(id, resolve));
      await post({ jsonrpc: '2.0', id, method, params });
      return answer;
    },
    notify: (method) => post({ jsonrpc: '2.0', method }),
    close: () => abort.abort(),
  };
  await session.call('initialize', {
    protocolVersion,
    capabilities: {},
    clientInfo: { name: 'plaza-bench', version: '1' },
  });
  await session.notify('notifications/initialized');
  return session;
}
