import type { IncomingMessage, ServerResponse } from 'node:http';

import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';

import { bearerChallenge, type JsonRpcId, RPC_ERRORS, rpcError } from './json-rpc.ts';

/**
 * Largest body of a request whose credential was refused that is read, and only to answer under
 * its request's id: a JSON-RPC request is far smaller, and nobody may make Plaza hold more.
 */
const MAX_UNAUTHENTICATED_BODY = 64 * 1024;

/**
 * Answers a request whose agent credential was refused: 401 with the Bearer challenge carrying
 * `reason`, and the JSON-RPC error under the id of the one request a POST carried, read only when
 * its Content-Length declares at most 64 KiB of JSON; under id null otherwise (no body, a batch,
 * a notification, a larger or unreadable body).
 */
export async function sendUnauthorized(req: IncomingMessage, res: ServerResponse, reason: string): Promise<void> {
  const text = JSON.stringify(rpcError(await soleRequestId(req), RPC_ERRORS.unauthorized, reason));
  res.writeHead(401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'www-authenticate': bearerChallenge(req.headers.authorization, reason) });
  res.end(text);
}

async function soleRequestId(req: IncomingMessage): Promise<JsonRpcId> {
  // Node refuses a request with both Content-Length and chunked encoding: the body is this long.
  const length = Number(req.headers['content-length']);
  if (req.method !== 'POST' || !isJsonContentType(req.headers['content-type'] ?? null) || !(length > 0 && length <= MAX_UNAUTHENTICATED_BODY)) return null;
  let message: unknown;
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return null;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  const { jsonrpc, id, method } = message as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  // The ids the gateway accepts (a string, or an integer of at most 2^53 - 1).
  const usable = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
  return jsonrpc === '2.0' && typeof method === 'string' && usable ? (id as string | number) : null;
}
