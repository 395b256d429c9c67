/**
 * The refusals `/mcp` answers once it reads a request's body, before any server sees it: while
 * the database cannot be read, a 2026-07-28 call whose `Mcp-Param-*` headers disagree with its
 * arguments, and a body no SDK server should see. Apart from the handler, which only asks whether
 * to go on.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

import { nestsDeeperThan } from '../../src/kernel/index.ts';
import { GATEWAY_ERROR_TABLE, GatewayError, gatewayErrorHeaders, sendGatewayError } from '../error-table.ts';
import { MAX_JSON_DEPTH, parseJson, storageUnavailable } from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import { RPC_ERRORS } from '../json-rpc-errors.ts';
import { claimedRevision, isModernRevision } from '../mcp-headers.ts';
import { BODY_REFUSED, readMessageBody } from '../request-body.ts';
import type { LocalProvider, ToolCatalog } from './catalog.ts';
import { paramHeaderMismatch, toolInputSchema } from './param-check.ts';

/**
 * Answers a request whose agent credential could not be checked (the database is unreachable):
 * 503, under the request's id when the body can be read (a body that cannot is answered as such).
 */
export async function refuseForStorage(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const read = await readMessageBody(req, res, parseJson);
  if (read === BODY_REFUSED) return;
  sendJson(
    res,
    GATEWAY_ERROR_TABLE.storage_unavailable.status,
    storageUnavailable(read?.body),
    gatewayErrorHeaders('storage_unavailable'),
  );
}

/**
 * Answers a 2026-07-28 tools/call whose `Mcp-Param-*` headers disagree with its arguments as the
 * tool's schema declares them (see param-check): -32020 with HTTP 400, nothing called. False when
 * they agree, or the message is no such call.
 */
export async function refusedParamHeaders(
  options: { catalog: ToolCatalog; local?: LocalProvider | undefined },
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<boolean> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: Record<string, unknown> };
  if (method !== 'tools/call' || !isModernRevision(claimedRevision(body)) || typeof params?.['name'] !== 'string')
    return false;
  const schema = await toolInputSchema(options.catalog, options.local, params['name']).catch(() => undefined);
  const mismatch = paramHeaderMismatch(req.headers, schema, params['arguments']);
  if (!mismatch) return false;
  sendJson(res, 400, {
    jsonrpc: '2.0',
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    error: {
      code: RPC_ERRORS.headerMismatch,
      message: `Bad Request: the request headers and body disagree: ${mismatch.body}`,
      data: { mismatch },
    },
  });
  return true;
}

/**
 * Answers a body no SDK server should see: one nesting deeper than MAX_JSON_DEPTH (the SDK's
 * validation walks a message recursively and overflows the stack), or valid JSON that is not
 * JSON-RPC (the SDK's transport would call it a parse error, -32700). False when it is neither.
 */
export function refusedShape(res: ServerResponse, parsedBody: unknown): boolean {
  if (nestsDeeperThan(parsedBody, MAX_JSON_DEPTH)) {
    sendGatewayError(
      res,
      new GatewayError('invalid_request', `Request body nests deeper than ${MAX_JSON_DEPTH} levels.`),
    );
    return true;
  }
  const notMessage = (Array.isArray(parsedBody) ? parsedBody : [parsedBody]).find(
    (m) => !JSONRPCMessageSchema.safeParse(m).success,
  );
  if (notMessage === undefined) return false;
  sendGatewayError(
    res,
    new GatewayError(
      'invalid_request',
      'Request body is not a JSON-RPC 2.0 message or batch as MCP defines one (jsonrpc "2.0", a method, a string or integer id for a request, params and its _meta objects when present).',
    ),
  );
  return true;
}
