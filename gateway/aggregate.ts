import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

import type { Clock } from '../src/kernel/index.ts';
import { nestsDeeperThan } from '../src/kernel/index.ts';
import { callTool, type ToolCallDeps } from './aggregate/call-tool.ts';
import { listedTools, type LocalProvider, type ToolCatalog } from './aggregate/catalog.ts';
import { listableTools } from './aggregate/listable.ts';
import { plainToolCall, refusedMessages } from './aggregate/messages.ts';
import { hasUpstreamCredential, upstreamProviderOf } from './aggregate/upstream-credential.ts';
import { type Authorize, createCallPipeline } from './call-pipeline.ts';
import { GATEWAY_ERROR_TABLE, GatewayError, gatewayErrorHeaders, sendGatewayError } from './error-table.ts';
import {
  createHeldAnswers,
  DEFAULT_HELD_ANSWER_LIMITS,
  DEFAULT_WRITE_TIMEOUT_MS,
  type HeldAnswers,
} from './held-answers.ts';
import type { AgentAuthenticator, AgentIdentity } from './identity/agin-card.ts';
import type { AssertionKey } from './identity/assertion.ts';
import { UPSTREAM_AUTHORIZATION_HEADER } from './identity/stamp.ts';
import { guardDrain, writeHeldAnswer } from './internal/answer-writer.ts';
import { MAX_JSON_DEPTH, parseJson, rpcError, storageUnavailable } from './internal/json-rpc.ts';
import { sendJson } from './internal/send-json.ts';
import type { ReceiptSink } from './receipt-sink.ts';
import { BODY_REFUSED, readMessageBody } from './request-body.ts';
import { loadServerSdk, serveOnce } from './server-sdk.ts';
import type { UpstreamPool } from './upstream-pool.ts';

export type { CatalogConnector, CatalogTool, LocalProvider, ToolCatalog } from './aggregate/catalog.ts';
export { TOOL_NAME_SEPARATOR } from './aggregate/catalog.ts';

/** Options of createAggregate. */
export interface AggregateOptions {
  local?: LocalProvider | undefined;
  catalog: ToolCatalog;
  agents: AgentAuthenticator;
  /** Whether an agent may make a call (see Authorize); default: every call is allowed. */
  authorize?: Authorize;
  receipts: ReceiptSink;
  pool: UpstreamPool;
  assertionKey: () => Promise<AssertionKey>;
  issuer: string;
  clock: Clock;
  serverInfo?: { name: string; version: string };
  onCall?: (endpointId: string) => void;
  /** The answer bytes this instance may hold (shared with the passthrough); default limits of its own. */
  held?: HeldAnswers;
  /** How long a client may take nothing of its answer before its connection is closed (see guardDrain). */
  writeTimeoutMs?: number;
}

/** Runs `then` when `res` closes, at once when it closed already. */
function whenClosed(res: ServerResponse, then: () => void): void {
  if (res.closed) then();
  else res.once('close', then);
}

/**
 * Answers a request whose agent credential could not be checked (the database is unreachable):
 * 503, under the request's id when the body can be read (a body that cannot is answered as such).
 */
async function refuseForStorage(req: IncomingMessage, res: ServerResponse): Promise<void> {
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
 * `/mcp`: one MCP server aggregating the online tools of every connector as
 * `<provider>__<tool>`. tools/list is served from the catalog (no fan-out), only the tools the
 * authorize hook lets the agent call; tools/call goes to the
 * connector through a pooled upstream session with the caller's identity stamped on it (the steps
 * of the gateway's CallPipeline, see aggregate/call-tool). Stateless (no session id), so any
 * instance answers any request.
 */
export function createAggregate(options: AggregateOptions) {
  const serverInfo = options.serverInfo ?? { name: 'plaza', version: '1' };
  const held = options.held ?? createHeldAnswers(DEFAULT_HELD_ANSWER_LIMITS);
  const writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
  const pipeline = createCallPipeline({
    agents: options.agents,
    authorize: options.authorize,
    assertionKey: options.assertionKey,
    issuer: options.issuer,
    receipts: options.receipts,
    clock: options.clock,
  });
  const deps: ToolCallDeps = {
    pipeline,
    catalog: options.catalog,
    local: options.local,
    pool: options.pool,
    held,
    onCall: options.onCall,
  };

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const identity = await pipeline.admit(req, res, {}, refuseForStorage);
    if (!identity) return;
    if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE') {
      sendGatewayError(
        res,
        new GatewayError(
          'sdk_method_not_allowed',
          `Method not allowed: /mcp takes POST (and DELETE); ${String(req.method).slice(0, 20)} is not one of them.`,
        ),
        { allow: 'POST, DELETE' },
      );
      return;
    }
    if (req.method === 'GET') {
      // A GET stream carries server-initiated messages; this endpoint has none (stateless, tools
      // only, listChanged false), so it offers none rather than hold a connection open for nothing
      // (spec: 405 when the server offers no stream at this endpoint).
      sendGatewayError(
        res,
        new GatewayError(
          'sdk_method_not_allowed',
          'Method not allowed: /mcp sends no server-initiated messages, so it offers no GET stream.',
        ),
        { allow: 'POST, DELETE' },
      );
      return;
    }
    if (
      req.method === 'POST' &&
      hasUpstreamCredential(req) &&
      (req.headersDistinct[UPSTREAM_AUTHORIZATION_HEADER]?.length ?? 0) > 1
    ) {
      // Node joins two header lines into one value: both would go to the provider.
      sendGatewayError(
        res,
        new GatewayError(
          'invalid_request',
          'Send X-PLATFORM-Upstream-Authorization once: it is one credential, for one provider.',
        ),
      );
      return;
    }
    if (req.method === 'POST' && hasUpstreamCredential(req) && upstreamProviderOf(req) === undefined) {
      // One credential, many providers: sent to every one, any anonymous listing could collect it.
      sendGatewayError(
        res,
        new GatewayError(
          'invalid_request',
          `On /mcp a third-party credential goes to one provider only: name it with X-PLATFORM-Upstream-Provider: <provider> (a provider slug), or call /mcp/p/<provider>.`,
        ),
      );
      return;
    }
    // The hot path: a plain tools/call is answered here as JSON (the transport lets a server answer
    // a POST with either JSON or SSE), validated like the SDK's server does, without building a
    // Server and transport per request. Everything else — initialize, tools/list, batches,
    // progress, errors of shape — is the SDK's.
    // Integers past 2^53 in arguments and results pass as written (see parseJson).
    const read = await readMessageBody(req, res, parseJson);
    if (read === BODY_REFUSED) return;
    const parsedBody = read?.body;
    if (read !== undefined) {
      const refusal = refusedMessages(parsedBody);
      if (refusal !== undefined) {
        sendGatewayError(res, new GatewayError('invalid_request', refusal));
        return;
      }
      const call = plainToolCall(req, parsedBody);
      if (call && 'invalid' in call) {
        sendGatewayError(
          res,
          new GatewayError('invalid_call_params', `Invalid params for tools/call: ${call.invalid}`, call.id),
        );
        return;
      }
      if (call) {
        await answerToolCall(identity, req, res, call);
        return;
      }
      // The SDK's validation walks a message recursively: deep enough, it overflows the stack and
      // answers with the RangeError's text. Refused here, in words, as /mcp/p/… refuses it.
      if (nestsDeeperThan(parsedBody, MAX_JSON_DEPTH)) {
        sendGatewayError(
          res,
          new GatewayError('invalid_request', `Request body nests deeper than ${MAX_JSON_DEPTH} levels.`),
        );
        return;
      }
      // Valid JSON that is not JSON-RPC: the SDK's transport would call it a parse error (-32700).
      const notMessage = (Array.isArray(parsedBody) ? parsedBody : [parsedBody]).find(
        (m) => !JSONRPCMessageSchema.safeParse(m).success,
      );
      if (notMessage !== undefined) {
        sendGatewayError(
          res,
          new GatewayError(
            'invalid_request',
            'Request body is not a JSON-RPC 2.0 message or batch as MCP defines one (jsonrpc "2.0", a method, a string or integer id for a request, params and its _meta objects when present).',
          ),
        );
        return;
      }
    }
    const sdk = await loadServerSdk();
    const server = new sdk.Server(serverInfo, {
      capabilities: { tools: { listChanged: false } },
      jsonSchemaValidator: sdk.jsonSchemaValidator,
    });
    // Only what this agent may call (issue 35): the listing differs per agent.
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: await listableTools(await listedTools(options.local, options.catalog), identity, options.authorize),
    }));
    let guarded = false;
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      // The SDK writes the answer: its bytes stay counted until the response closes, and a client
      // that takes none of them is cut after the write timeout.
      const hold = held.open(identity.agentId);
      whenClosed(res, () => hold.release());
      try {
        return await callTool(deps, identity, req, request.params as never, {
          ...(extra as never as { signal: AbortSignal; sendNotification: never }),
          hold,
        });
      } finally {
        if (!guarded) guardDrain(res, writeTimeoutMs);
        guarded = true;
      }
    });
    await serveOnce(sdk, server, req, res, parsedBody);
  };

  async function answerToolCall(
    identity: AgentIdentity,
    req: IncomingMessage,
    res: ServerResponse,
    call: Extract<ReturnType<typeof plainToolCall>, { params: unknown }>,
  ): Promise<void> {
    const controller = new AbortController();
    const onClose = () => controller.abort();
    res.on('close', onClose);
    const hold = held.open(identity.agentId);
    whenClosed(res, () => hold.release());
    try {
      const result = await callTool(deps, identity, req, call.params, {
        signal: controller.signal,
        sendNotification: async () => undefined,
        hold,
      });
      const valid = CallToolResultSchema.safeParse(result);
      if (valid.success)
        writeHeldAnswer(
          res,
          {
            status: 200,
            headers: { 'content-type': 'application/json' },
            text: JSON.stringify({ jsonrpc: '2.0', id: call.id, result: valid.data }),
          },
          hold,
          writeTimeoutMs,
        );
      else
        sendJson(
          res,
          200,
          rpcError(call.id, ErrorCode.InvalidParams, `Invalid tools/call result: ${valid.error.message}`),
        );
    } catch (error) {
      // As the SDK's server answers a handler that throws (a receipt that could not be recorded no longer does: see receipted).
      sendJson(
        res,
        200,
        rpcError(call.id, ErrorCode.InternalError, error instanceof Error ? error.message : 'Internal error'),
      );
    } finally {
      res.off('close', onClose);
    }
  }
}
