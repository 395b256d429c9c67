/**
 * The gateway benchmark's MCP client: one keep-alive pool (undici), a session initialised at a
 * URL (directly or through a gateway), and the echo call every load phase sends.
 */
import { Agent, request } from 'undici';

/** The revision the bench's client speaks (the passthrough's upstream exchange is in it too). */
export const PROTOCOL_VERSION = '2025-06-18';

/** The load generator's connection pool (keep-alive); one per run, closed by closeLoadPool. */
let dispatcher: Agent | undefined;

/** Closes the load generator's connection pool (the next call opens a new one). */
export async function closeLoadPool(): Promise<void> {
  await dispatcher?.close();
  dispatcher = undefined;
}

/** One way of calling the echo tool: a URL, fixed headers, and the tool name to call. */
export interface Target {
  url: string;
  headers: Record<string, string>;
  tool: string;
  /** `params._meta` of each call (a 2026-07-28 request's envelope). */
  meta?: Record<string, unknown>;
}

let sequence = 0;

/** The next JSON-RPC id (and echo message number) of this load generator. */
export function nextSequence(): number {
  return ++sequence;
}

async function post(
  target: Target,
  body: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const res = await request(target.url, {
    method: 'POST',
    dispatcher: (dispatcher ??= new Agent({ connections: 128, keepAliveTimeout: 60_000, pipelining: 1 })),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...target.headers },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** Initializes an MCP session at `url` (directly or through the gateway); returns the headers to reuse. */
export async function initialize(
  url: string,
  headers: Record<string, string>,
  protocolVersion = PROTOCOL_VERSION,
): Promise<Record<string, string>> {
  const target = { url, headers, tool: '' };
  const init = await post(target, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'plaza-bench', version: '1' } },
  });
  if (init.status !== 200) throw new Error(`initialize at ${url} answered ${init.status}: ${init.text.slice(0, 200)}`);
  const session = init.headers['mcp-session-id'];
  // The revision the server answered (it may offer another than the one asked for).
  const agreed = /"protocolVersion"\s*:\s*"([^"]+)"/.exec(init.text)?.[1] ?? protocolVersion;
  const out: Record<string, string> = { ...headers, 'mcp-protocol-version': agreed };
  if (typeof session === 'string') out['mcp-session-id'] = session;
  const notified = await post({ url, headers: out, tool: '' }, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (notified.status >= 300) throw new Error(`notifications/initialized at ${url} answered ${notified.status}`);
  return out;
}

/** Calls echo once; true when the answer is a successful result carrying the echoed text. */
export async function callEcho(target: Target, counter: { calls: number }): Promise<boolean> {
  const n = ++sequence;
  counter.calls++;
  const res = await post(target, {
    jsonrpc: '2.0',
    id: n,
    method: 'tools/call',
    params: { name: target.tool, arguments: { message: `m${n}` }, ...(target.meta ? { _meta: target.meta } : {}) },
  });
  return res.status === 200 && res.text.includes(`Echo: m${n}`) && !res.text.includes('"isError":true');
}

/** Opens one streamable-HTTP session at `url` and gives a call that returns the answer's text (for peers). */
export async function streamableCaller(url: string): Promise<(worker: number, message: string) => Promise<string>> {
  const target: Target = { url, headers: await initialize(url, {}), tool: 'echo' };
  return async (_worker, message) =>
    (
      await post(target, {
        jsonrpc: '2.0',
        id: nextSequence(),
        method: 'tools/call',
        params: { name: 'echo', arguments: { message } },
      })
    ).text;
}
