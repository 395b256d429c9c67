import type { IncomingMessage, ServerResponse } from 'node:http';

import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';

import { AuthError } from '../src/kernel/index.ts';
import { GatewayError, sendGatewayError } from './error-table.ts';
import type { JsonRpcId } from './json-rpc-errors.ts';

/**
 * A credential that is valid but lacks a scope the endpoint needs (an OAuth access token granted
 * without it): answered 403 with `error="insufficient_scope"` and the `scope` to ask for (RFC 6750
 * §3.1), so a client can step up instead of starting over.
 */
export class InsufficientScopeError extends AuthError {
  readonly scope: string;

  constructor(message: string, scope: string) {
    super(message);
    this.scope = scope;
  }
}

/** What a challenge names beyond the reason: where the Protected Resource Metadata is, a scope to ask for. */
export interface ChallengeParams {
  resourceMetadata?: string | undefined;
  insufficientScope?: string | undefined;
}

/**
 * The `WWW-Authenticate` of a 401 (or 403) on a gateway endpoint. A request that sent a credential
 * gets `error="invalid_token"` and `reason` as `error_description` (RFC 6750 §3): MCP clients that
 * show the challenge, not the body, then say why. A request without one gets neither (§3.1: no
 * error information). `resource_metadata` (RFC 9728 §5.1) is where an MCP client that speaks OAuth
 * starts its authorization; without it, a client learns only that a bearer token is needed.
 */
export function bearerChallenge(
  authorization: string | undefined,
  reason: string,
  params: ChallengeParams = {},
): string {
  const realm = `Bearer realm="plaza"${params.resourceMetadata === undefined ? '' : `, resource_metadata="${params.resourceMetadata}"`}`;
  if (params.insufficientScope !== undefined) {
    return `${realm}, error="insufficient_scope", scope="${challengeText(params.insufficientScope)}", error_description="${challengeText(reason)}"`;
  }
  if (authorization === undefined || authorization === '') return realm;
  return `${realm}, error="invalid_token", error_description="${challengeText(reason)}"`;
}

/**
 * `text` in the characters RFC 6750 §3 allows in `error_description` (%x20-21 / %x23-5B /
 * %x5D-7E): compatibility forms decomposed ("…" becomes "...", accents fall away), white space
 * as a space, `"` as `'`, anything else left out.
 */
function challengeText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\s/g, ' ')
    .replaceAll('"', "'")
    .replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '');
}

/**
 * Largest body of a request whose credential was refused that is read, and only to answer under
 * its request's id: a JSON-RPC request is far smaller, and nobody may make Plaza hold more.
 */
const MAX_UNAUTHENTICATED_BODY = 64 * 1024;

/**
 * Answers a request whose agent credential was refused: 401 (`unauthorized` in the gateway's error
 * table; 403 `insufficient_scope` for an InsufficientScopeError) with the Bearer challenge carrying
 * the reason and `resourceMetadata`, and the JSON-RPC error under the id of the one request a POST
 * carried, read only when its Content-Length declares at most 64 KiB of JSON; under id null
 * otherwise (no body, a batch, a notification, a larger or unreadable body).
 */
export async function sendUnauthorized(
  req: IncomingMessage,
  res: ServerResponse,
  refusal: string | AuthError,
  resourceMetadata?: string,
): Promise<void> {
  const reason = typeof refusal === 'string' ? refusal : refusal.message;
  const insufficientScope = refusal instanceof InsufficientScopeError ? refusal.scope : undefined;
  const code = insufficientScope === undefined ? 'unauthorized' : 'insufficient_scope';
  const challenge = bearerChallenge(req.headers.authorization, reason, { resourceMetadata, insufficientScope });
  sendGatewayError(res, new GatewayError(code, reason, await soleRequestId(req)), { 'www-authenticate': challenge });
}

async function soleRequestId(req: IncomingMessage): Promise<JsonRpcId> {
  // Node refuses a request with both Content-Length and chunked encoding: the body is this long.
  const length = Number(req.headers['content-length']);
  if (
    req.method !== 'POST' ||
    !isJsonContentType(req.headers['content-type'] ?? null) ||
    !(length > 0 && length <= MAX_UNAUTHENTICATED_BODY)
  )
    return null;
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
