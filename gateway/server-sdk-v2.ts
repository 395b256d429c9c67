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

/**
 * Answers `res` with a web-standard Response, its body streamed as it comes (an event stream too);
 * a client that leaves cancels the rest, so nothing keeps producing for no one.
 */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      // Waits for a client that reads slowly rather than holding what it has not taken.
      if (!res.write(value)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
    }
  } catch {
    // Cancelled (the client left) or the handler failed mid-answer: the response ends here.
  }
  res.end();
}
