import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';

import { BODY_CUT, bodyTooLarge, NOT_UTF8, RPC_ERRORS, rpcError } from './internal/json-rpc.ts';

/** Largest request body read (the SDK transport's own default). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What readMessageBody returns once it has answered the request itself. */
export const BODY_REFUSED = Symbol('body refused');

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** The request body as text; undefined when it is larger than `limit` bytes, null when the client cut it short, false when it is not UTF-8. */
async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined | null | false> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) return undefined;
      chunks.push(chunk);
    }
  } catch {
    return null;
  }
  const body = Buffer.concat(chunks);
  return isUtf8(body) && body.toString('utf8');
}

/**
 * The parsed body of a POST the SDK's transport would read (its Accept names JSON and SSE, its
 * Content-Type is JSON), read here so that the gateway's SDK-built servers (`/mcp`,
 * `/mcp/p/platform`) refuse a body as `/mcp/p/<provider>` does: cut short 400, past
 * MAX_BODY_BYTES 413, not UTF-8 or not JSON 400 `-32700`. Undefined for any other request (the
 * transport answers it); BODY_REFUSED once the request is answered.
 */
export async function readMessageBody(
  req: IncomingMessage,
  res: ServerResponse,
  parse: (text: string) => unknown,
): Promise<{ body: unknown } | typeof BODY_REFUSED | undefined> {
  const accept = req.headers.accept ?? '';
  if (
    req.method !== 'POST' ||
    !accept.includes('application/json') ||
    !accept.includes('text/event-stream') ||
    !isJsonContentType(req.headers['content-type'] ?? null)
  )
    return undefined;
  const text = await readBody(req, MAX_BODY_BYTES);
  if (text === null) {
    // The client cut its request short: its mistake (or its leaving), not Plaza's failure.
    sendJson(res, 400, rpcError(null, RPC_ERRORS.invalidRequest, BODY_CUT));
    return BODY_REFUSED;
  }
  if (text === false) {
    sendJson(res, 400, rpcError(null, RPC_ERRORS.parseError, NOT_UTF8));
    return BODY_REFUSED;
  }
  if (text === undefined) {
    // The rest of the body is not read: the connection cannot be reused.
    sendJson(res, 413, rpcError(null, RPC_ERRORS.invalidRequest, bodyTooLarge(MAX_BODY_BYTES)), {
      connection: 'close',
    });
    return BODY_REFUSED;
  }
  try {
    return { body: parse(text) };
  } catch {
    sendJson(res, 400, rpcError(null, RPC_ERRORS.parseError, 'Parse error: Invalid JSON'));
    return BODY_REFUSED;
  }
}

/**
 * Why a request body cannot be read as sent: MCP's transport defines no content coding, so a body
 * sent compressed (`Content-Encoding: gzip`, …) is refused with 415 rather than parsed as JSON and
 * called malformed. Undefined for an identity body.
 */
export function unsupportedEncoding(contentEncoding: string | undefined): string | undefined {
  if (contentEncoding === undefined) return undefined;
  const coding = contentEncoding.trim().toLowerCase();
  if (coding === '' || coding === 'identity') return undefined;
  return `Content-Encoding ${contentEncoding.slice(0, 40)} is not supported on MCP endpoints; send the body uncompressed.`;
}
