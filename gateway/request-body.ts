import type { IncomingMessage, ServerResponse } from 'node:http';

import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';

import { GatewayError, sendGatewayError } from './error-table.ts';
import { readRequestText } from './internal/request-text.ts';

/** Largest request body read (the SDK transport's own default). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What readMessageBody returns once it has answered the request itself. */
export const BODY_REFUSED = Symbol('body refused');

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
  let text: string;
  try {
    text = await readRequestText(req, MAX_BODY_BYTES);
  } catch (error) {
    // Cut short (the client's mistake, or its leaving), not UTF-8, or past the limit (the rest unread).
    sendGatewayError(res, error as GatewayError);
    return BODY_REFUSED;
  }
  try {
    return { body: parse(text) };
  } catch {
    sendGatewayError(res, new GatewayError('parse_error', 'Parse error: Invalid JSON'));
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
