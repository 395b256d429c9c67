/**
 * The MCP SDK v2's server half (`@modelcontextprotocol/server`), which speaks revision 2026-07-28,
 * loaded on first use like the SDK v1 server (see loadServerSdk): most requests never need it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type * as ServerModule from '@modelcontextprotocol/server';

/** The SDK v2 server module. */
export type ServerSdkV2 = typeof ServerModule;

let sdk: Promise<ServerSdkV2> | undefined;

/** Loads the SDK v2 server once per process. */
export function loadServerSdkV2(): Promise<ServerSdkV2> {
  sdk ??= import('@modelcontextprotocol/server');
  return sdk;
}

/**
 * The web-standard Request of a Node request whose body was read already (`body`, as JSON text):
 * its method, URL and headers (multi-valued ones joined as HTTP joins them).
 */
export function webRequest(req: IncomingMessage, body: string | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  // Only the path matters to the handler; the host is this server's own.
  return new Request(new URL(req.url ?? '/', 'http://plaza.invalid'), {
    method: req.method ?? 'POST',
    headers,
    ...(body === undefined ? {} : { body }),
  });
}

/** Answers `res` with a web-standard Response (whole: the handlers that use this answer in JSON). */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(body);
}
