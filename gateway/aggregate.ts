import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  CallToolRequestSchema,
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

import { AuthError, type Clock, nestsDeeperThan, newId } from '../src/kernel/index.ts';
import {
  type AnswerHold,
  createHeldAnswers,
  DEFAULT_HELD_ANSWER_LIMITS,
  DEFAULT_WRITE_TIMEOUT_MS,
  heldAnswerDropped,
  type HeldAnswers,
} from './held-answers.ts';
import type { AgentAuthenticator, AgentIdentity } from './identity/agin-card.ts';
import { type AssertionKey, signAssertion } from './identity/assertion.ts';
import {
  stampCallParams,
  stampResult,
  UPSTREAM_AUTHORIZATION_HEADER,
  UPSTREAM_PROVIDER_HEADER,
  upstreamHeaders,
} from './identity/stamp.ts';
import { guardDrain, writeHeldAnswer } from './internal/answer-writer.ts';
import {
  callAnswer,
  MAX_JSON_DEPTH,
  parseJson,
  rawJsonText,
  RECEIPT_UNRECORDED,
  RPC_ERRORS,
  rpcError,
  STORAGE_RETRY_AFTER_S,
  STORAGE_UNAVAILABLE,
  storageUnavailable,
} from './internal/json-rpc.ts';
import { callSecrets } from './internal/receipt-redaction.ts';
import type { Connector } from './passthrough.ts';
import {
  type CallContext,
  MAX_TOOL_NAME_LENGTH,
  type receiptFor,
  type ReceiptSink,
  recordCall,
} from './receipt-sink.ts';
import { BODY_REFUSED, readMessageBody } from './request-body.ts';
import { describeIssues, loadServerSdk, serveOnce } from './server-sdk.ts';
import { traceCall, traceUpstreamStart } from './telemetry.ts';
import { sendUnauthorized } from './unauthorized.ts';
import { UpstreamCallError } from './upstream-client.ts';
import type { UpstreamPool } from './upstream-pool.ts';

/** Separator between provider and tool in aggregated tool names. */
export const TOOL_NAME_SEPARATOR = '__';

/** A tool of an online connector, as the catalog stores it. */
export interface CatalogTool {
  provider: string;
  name: string;
  /** MCP's display name, when the provider published one. */
  title?: string | null;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The JSON Schema of a call's `structuredContent`, when published: clients check results against it. */
  outputSchema?: Record<string, unknown> | null;
  annotations: Record<string, unknown>;
  /** MCP's `execution` (`taskSupport`), when published. */
  execution?: Record<string, unknown> | null;
  /** MCP's `icons`, as the probe kept them (safe sources only, bounded). */
  icons?: { src: string; mimeType?: string; sizes?: string[]; theme?: 'light' | 'dark' }[] | null;
  /** MCP's `_meta` of the tool, as the probe kept it. */
  meta?: Record<string, unknown> | null;
}

/** An online connector as `/mcp` routes to it. */
export interface CatalogConnector extends Connector {
  /**
   * Its tools that run only as tasks (`execution.taskSupport` "required"): `/mcp`, which relays no
   * tasks, neither lists nor calls them. Absent: none.
   */
  taskOnlyTools?: ReadonlySet<string>;
}

/** What the aggregated endpoint reads: online tools, and connectors by provider. */
export interface ToolCatalog {
  onlineTools(): Promise<CatalogTool[]>;
  byProvider(provider: string): Promise<CatalogConnector | undefined>;
  /**
   * Whether `provider` has no online endpoint but one that serves only callers with a credential
   * of their own (`auth_required`): its tools are unknown to Plaza, so none is on `/mcp`, and
   * `/mcp/p/<provider>` reaches it for a caller who brings the credential.
   */
  needsCredential(provider: string): Promise<boolean>;
}

/** Whether a tool runs only as a task (MCP `execution.taskSupport` "required"). */
function runsOnlyAsTask(tool: CatalogTool): boolean {
  return tool.execution?.['taskSupport'] === 'required';
}

/**
 * A provider served inside this process (Plaza's own `platform` tools): listed with the online
 * tools and called directly instead of through an upstream session; receipts as for any call.
 */
export interface LocalProvider {
  provider: string;
  tools(): CatalogTool[];
  call(identity: AgentIdentity, tool: string, args: unknown, callId: string): Promise<CallToolResult>;
}

/** Options of createAggregate. */
export interface AggregateOptions {
  local?: LocalProvider | undefined;
  catalog: ToolCatalog;
  agents: AgentAuthenticator;
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

/**
 * The caller's headers a call takes upstream. Not MCP-Protocol-Version: it names the caller's
 * version with /mcp, and the pooled session speaks the one its provider agreed to (see the pool).
 */
const FORWARDED = new Set(['user-agent', 'accept-language']);

const PROVIDER_SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

function hasUpstreamCredential(req: IncomingMessage): boolean {
  const value = req.headers[UPSTREAM_AUTHORIZATION_HEADER];
  return typeof value === 'string' && value.trim() !== '';
}

/** The provider slug the caller's credential is for, when it named a valid one. */
function upstreamProviderOf(req: IncomingMessage): string | undefined {
  const value = req.headers[UPSTREAM_PROVIDER_HEADER];
  const slug = typeof value === 'string' ? value.trim() : undefined;
  return slug !== undefined && PROVIDER_SLUG.test(slug) ? slug : undefined;
}

/** A receipt's provider holds at most this many characters. */
const MAX_PROVIDER_LENGTH = 200;
/** The provider of a receipt for a call that named none Plaza could use (no slug holds parentheses). */
const UNKNOWN_PROVIDER = '(unknown)';

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Runs `then` when `res` closes, at once when it closed already. */
function whenClosed(res: ServerResponse, then: () => void): void {
  if (res.closed) then();
  else res.once('close', then);
}

/** A number, or a raw JSON number (past 2^53) as the nearest number; else undefined. */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  const raw = rawJsonText(value);
  return raw === undefined ? undefined : Number(raw);
}

/**
 * The one message the fast path answers itself: a single tools/call request without a progress
 * token or task, valid as the SDK's server would validate it, under a supported protocol version.
 * A tools/call whose params are not valid gets `invalid` (answered -32602 here; the SDK's server
 * would answer -32603 with the validator's whole dump). Anything else goes to the SDK's server.
 */
function plainToolCall(
  req: IncomingMessage,
  body: unknown,
):
  | { id: string | number; params: { name: string; arguments?: unknown; _meta?: Record<string, unknown> } }
  | { id: string | number; invalid: string }
  | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  if (
    message.jsonrpc !== '2.0' ||
    message.method !== 'tools/call' ||
    !(typeof message.id === 'string' || (typeof message.id === 'number' && Number.isInteger(message.id)))
  )
    return undefined;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) return undefined;
  const parsed = CallToolRequestSchema.safeParse(body);
  if (!parsed.success) return { id: message.id, invalid: describeIssues(parsed.error.issues) };
  const params = parsed.data.params as {
    name: string;
    arguments?: unknown;
    task?: unknown;
    _meta?: Record<string, unknown>;
  };
  if (params.task !== undefined || params._meta?.['progressToken'] !== undefined) return undefined;
  return { id: message.id, params };
}

/**
 * Why a POST body is refused before anything runs, as `/mcp/p/…` refuses it: an empty batch, a
 * tools/call sent as a notification (it would run with nobody told, or not at all), a request id
 * the caller's answer could not carry back (past 2^53), or two requests of a batch under one id
 * (their answers could not be told apart). Undefined when none of these.
 */
function refusedMessages(body: unknown): string | undefined {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0) return 'An empty batch holds no JSON-RPC message.';
  const ids = new Set<unknown>();
  for (const m of messages) {
    if (typeof m !== 'object' || m === null) continue;
    const { id, method } = m as { id?: unknown; method?: unknown };
    if (method === 'tools/call' && id === undefined)
      return 'tools/call must be a request with an id: a notification gets no answer and no receipt.';
    if (typeof method !== 'string' || id === undefined) continue;
    if (rawJsonText(id) !== undefined || (typeof id === 'number' && !Number.isSafeInteger(id)))
      return 'Request ids must be strings or integers (at most 2^53 - 1).';
    if (ids.has(id)) return 'Request ids must be unique within a batch.';
    ids.add(id);
  }
  return undefined;
}

/**
 * `/mcp`: one MCP server aggregating the online tools of every connector as
 * `<provider>__<tool>`. tools/list is served from the catalog (no fan-out); tools/call goes to the
 * connector through a pooled upstream session with the caller's identity stamped on it. Stateless
 * (no session id), so any instance answers any request.
 */
export function createAggregate(options: AggregateOptions) {
  const serverInfo = options.serverInfo ?? { name: 'plaza', version: '1' };
  const held = options.held ?? createHeldAnswers(DEFAULT_HELD_ANSWER_LIMITS);
  const writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
  async function callTool(
    identity: AgentIdentity,
    req: IncomingMessage,
    params: { name: string; arguments?: unknown; _meta?: Record<string, unknown> },
    extra: {
      signal: AbortSignal;
      sendNotification: (n: {
        method: 'notifications/progress';
        params: { progressToken: string | number; progress: number; total?: number; message?: string };
      }) => Promise<void>;
      /** Where the answer's bytes are counted while it is read (held-answers). */
      hold?: AnswerHold;
    },
  ): Promise<CallToolResult> {
    const split = params.name.indexOf(TOOL_NAME_SEPARATOR);
    const provider = split > 0 ? params.name.slice(0, split) : '';
    const tool = split > 0 ? params.name.slice(split + TOOL_NAME_SEPARATOR.length) : '';
    // A call refused before any connector is asked is still a tools/call of this agent's: it gets a
    // call id, the stamp and an `error` receipt, like every other (an auditor sees the attempt),
    // unless its name is longer than a receipt holds.
    const refuse = async (why: string): Promise<CallToolResult> => {
      if (params.name.length > MAX_TOOL_NAME_LENGTH)
        return {
          content: [
            { type: 'text', text: `Tool names are at most ${MAX_TOOL_NAME_LENGTH} characters; nothing was called.` },
          ],
          isError: true,
        };
      const call: CallContext = {
        callId: newId('call', options.clock.now()),
        identity,
        ...(provider && tool && provider.length <= MAX_PROVIDER_LENGTH
          ? { provider, tool }
          : { provider: UNKNOWN_PROVIDER, tool: params.name }),
        startedAt: options.clock.now(),
      };
      traceCall(call, 'aggregate');
      const said = `${why[0]!.toUpperCase()}${why.slice(1)}.`;
      try {
        await recordCall(options.receipts, call, { refused: why }, options.clock.now());
      } catch {
        // Nothing was called: the refusal stands, without a call id that would name no receipt,
        // and says that none records it (sync receipts are stored before the answer leaves).
        return { content: [{ type: 'text', text: `${said} Plaza could not record its receipt.` }], isError: true };
      }
      return stampResult(
        { content: [{ type: 'text', text: said }], isError: true },
        identity,
        call.callId,
      ) as CallToolResult;
    };
    /**
     * The result of a call that ran, stamped, once its receipt is recorded; when the receipt can be
     * stored nowhere, an isError result that says so, as /mcp/p/… answers: the writer's error
     * (a file system message naming the spool's path) never reaches the caller.
     */
    const receipted = async (
      call: CallContext,
      outcome: Parameters<typeof receiptFor>[1],
      result: unknown,
    ): Promise<CallToolResult> => {
      try {
        await recordCall(options.receipts, call, outcome, options.clock.now());
      } catch {
        return stampResult(
          { content: [{ type: 'text', text: RECEIPT_UNRECORDED }], isError: true },
          identity,
          call.callId,
        ) as CallToolResult;
      }
      return stampResult(result, identity, call.callId) as CallToolResult;
    };
    if (nestsDeeperThan(params.arguments, MAX_JSON_DEPTH))
      return refuse(`tool arguments nest deeper than ${MAX_JSON_DEPTH} levels; nothing was called`);
    const local = options.local;
    if (local && provider === local.provider && tool) {
      if (tool.length > MAX_TOOL_NAME_LENGTH)
        return {
          content: [
            { type: 'text', text: `Tool names are at most ${MAX_TOOL_NAME_LENGTH} characters; nothing was called.` },
          ],
          isError: true,
        };
      const call: CallContext = {
        callId: newId('call', options.clock.now()),
        identity,
        provider,
        tool,
        startedAt: options.clock.now(),
      };
      traceCall(call, 'aggregate');
      const result = await local.call(identity, tool, params.arguments ?? {}, call.callId);
      return receipted(call, { result }, result);
    }
    let connector: CatalogConnector | undefined;
    let needsCredential: boolean;
    try {
      connector = provider ? await options.catalog.byProvider(provider) : undefined;
      needsCredential =
        !connector && provider !== '' && tool !== '' && (await options.catalog.needsCredential(provider));
    } catch {
      return { content: [{ type: 'text', text: STORAGE_UNAVAILABLE }], isError: true };
    }
    if (needsCredential) {
      return refuse(
        `unknown tool ${params.name}: provider ${provider} serves only callers with a credential of their own, so /mcp lists none of its tools; call them on /mcp/p/${provider} with that credential in X-PLATFORM-Upstream-Authorization; nothing was called`,
      );
    }
    if (!connector || !tool)
      return refuse(
        `unknown tool ${params.name}: expected <provider>${TOOL_NAME_SEPARATOR}<tool> of an online connector; nothing was called`,
      );
    if (tool.length > MAX_TOOL_NAME_LENGTH)
      return {
        content: [
          { type: 'text', text: `Tool names are at most ${MAX_TOOL_NAME_LENGTH} characters; nothing was called.` },
        ],
        isError: true,
      };
    // Its provider would answer a plain call with an error, and /mcp declares no tasks capability.
    if (connector.taskOnlyTools?.has(tool)) {
      return refuse(
        `tool ${params.name} runs only as a task (execution.taskSupport "required"), which /mcp does not relay: call it as a task on /mcp/p/${provider}; nothing was called`,
      );
    }
    // An agent (or an instance) holding as many unread answers as it may gets no more until some are read.
    const busy = held.refusal(identity.agentId);
    if (busy) return refuse(`${busy}; nothing was called`);
    const call: CallContext = {
      callId: newId('call', options.clock.now()),
      identity,
      provider,
      tool,
      startedAt: options.clock.now(),
      secrets: callSecrets(req.headers[UPSTREAM_AUTHORIZATION_HEADER]),
    };
    traceCall(call, 'aggregate');
    options.onCall?.(connector.endpointId);
    const key = await options.assertionKey();
    const assertion = await signAssertion(key, {
      card: identity,
      callId: call.callId,
      audience: connector.url,
      issuer: options.issuer,
      nowSeconds: Math.floor(options.clock.now() / 1000),
    });
    const caller: Record<string, string | string[] | undefined> = {};
    for (const [name, value] of Object.entries(req.headers)) if (FORWARDED.has(name)) caller[name] = value;
    // The caller's credential goes only to the provider it named it for (spec §2.5: only to a provider that requires it).
    if (upstreamProviderOf(req) === provider)
      caller[UPSTREAM_AUTHORIZATION_HEADER] = req.headers[UPSTREAM_AUTHORIZATION_HEADER];
    const headers = upstreamHeaders(caller, identity, call.callId, assertion);
    const progressToken = params._meta?.['progressToken'];
    const upstreamParams = stampCallParams(
      { name: tool, arguments: params.arguments ?? {}, _meta: params._meta },
      identity,
      call.callId,
    );
    let outcome: Parameters<typeof receiptFor>[1];
    let result: Record<string, unknown>;
    try {
      traceUpstreamStart(call);
      const response = await options.pool.request({
        url: connector.url,
        method: 'tools/call',
        params: upstreamParams,
        headers,
        signal: extra.signal,
        onBytes: extra.hold
          ? (size) => (extra.hold!.set(size) ? undefined : heldAnswerDropped(held.limits))
          : undefined,
        // /mcp keeps no session with the agent that an upstream's request could be relayed in and
        // answered back through (see docs/decisions/gateway.md,
        // "/mcp answers an upstream's requests itself"); a passthrough keeps one.
        refusal: (method) =>
          `Plaza's aggregate endpoint /mcp cannot pass ${method} on to the agent; an agent that supports it can call this tool through /mcp/p/${provider}.`,
        onNotification: (n) => {
          if (
            n.method === 'notifications/progress' &&
            (typeof progressToken === 'string' || typeof progressToken === 'number')
          ) {
            const p = (n.params ?? {}) as { progress?: unknown; total?: unknown; message?: string };
            // Figures past 2^53 arrive as raw JSON (parseJson): a progress count is a number here.
            const progress = asNumber(p.progress);
            const total = asNumber(p.total);
            if (progress !== undefined) {
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken, progress, total, message: p.message },
                })
                .catch(() => undefined);
            }
          }
        },
      });
      // Read whole: it will be delivered (or its connection cut), not let go for another.
      if (extra.hold && !extra.hold.keep() && !extra.signal.aborted)
        throw new UpstreamCallError(heldAnswerDropped(held.limits));
      const answer = callAnswer(response);
      const valid = 'result' in answer ? CallToolResultSchema.safeParse(answer.result) : undefined;
      if ('error' in answer) {
        outcome = { error: answer.error };
        result = {
          content: [{ type: 'text', text: `Upstream error ${answer.error.code}: ${answer.error.message}` }],
          isError: true,
        };
      } else if ('malformed' in answer || !valid?.success) {
        // Recorded as what the caller gets: a failed call, not a success it never sees.
        const why =
          'malformed' in answer
            ? answer.malformed
            : `the upstream answered an invalid tools/call result (${describeIssues(valid!.error!.issues)})`;
        outcome = { failure: why };
        result = { content: [{ type: 'text', text: `Call failed: ${why}.` }], isError: true };
      } else {
        outcome = { result: answer.result };
        result = answer.result;
      }
    } catch (error) {
      const why = error instanceof UpstreamCallError ? error.message : 'the upstream call failed';
      outcome = { failure: why };
      result = { content: [{ type: 'text', text: `Call failed: ${why}.` }], isError: true };
    }
    return receipted(call, outcome, result);
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let identity: AgentIdentity;
    try {
      const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!match?.[1]) throw new AuthError('Send the agent credential as Authorization: Bearer <agent token>.');
      identity = await options.agents.authenticate(match[1], {});
    } catch (error) {
      if (!(error instanceof AuthError)) {
        // The credential could not be checked (the database is unreachable): refuse, clearly, under
        // the request's id when the body can be read (a body that cannot is answered as such).
        const read = await readMessageBody(req, res, parseJson);
        if (read === BODY_REFUSED) return;
        sendJson(res, 503, storageUnavailable(read?.body), { 'retry-after': STORAGE_RETRY_AFTER_S });
        return;
      }
      await sendUnauthorized(req, res, error, options.agents.resourceMetadataUrl?.({}));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE') {
      sendJson(
        res,
        405,
        rpcError(
          null,
          -32000,
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
      sendJson(
        res,
        405,
        rpcError(
          null,
          -32000,
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
      sendJson(
        res,
        400,
        rpcError(
          null,
          RPC_ERRORS.invalidRequest,
          'Send X-PLATFORM-Upstream-Authorization once: it is one credential, for one provider.',
        ),
      );
      return;
    }
    if (req.method === 'POST' && hasUpstreamCredential(req) && upstreamProviderOf(req) === undefined) {
      // One credential, many providers: sent to every one, any anonymous listing could collect it.
      sendJson(
        res,
        400,
        rpcError(
          null,
          RPC_ERRORS.invalidRequest,
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
        sendJson(res, 400, rpcError(null, RPC_ERRORS.invalidRequest, refusal));
        return;
      }
      const call = plainToolCall(req, parsedBody);
      if (call && 'invalid' in call) {
        sendJson(
          res,
          200,
          rpcError(call.id, ErrorCode.InvalidParams, `Invalid params for tools/call: ${call.invalid}`),
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
        sendJson(
          res,
          400,
          rpcError(null, RPC_ERRORS.invalidRequest, `Request body nests deeper than ${MAX_JSON_DEPTH} levels.`),
        );
        return;
      }
      // Valid JSON that is not JSON-RPC: the SDK's transport would call it a parse error (-32700).
      const notMessage = (Array.isArray(parsedBody) ? parsedBody : [parsedBody]).find(
        (m) => !JSONRPCMessageSchema.safeParse(m).success,
      );
      if (notMessage !== undefined) {
        sendJson(
          res,
          400,
          rpcError(
            null,
            RPC_ERRORS.invalidRequest,
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
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      // Tools that run only as tasks stay off: /mcp relays no tasks (they work on /mcp/p/<provider>).
      tools: [
        ...(options.local?.tools() ?? []),
        ...(await options.catalog.onlineTools()).filter((t) => !runsOnlyAsTask(t)),
      ].map((t) => ({
        name: `${t.provider}${TOOL_NAME_SEPARATOR}${t.name}`,
        ...(t.title ? { title: t.title } : {}),
        description: t.description,
        inputSchema: { type: 'object', ...t.inputSchema } as { type: 'object' },
        // As published (the probe kept it only in MCP's shape): the agent's client checks each call's structuredContent against it.
        ...(t.outputSchema ? { outputSchema: t.outputSchema as { type: 'object' } } : {}),
        annotations: t.annotations,
        ...(t.execution ? { execution: t.execution } : {}),
        ...(t.icons ? { icons: t.icons } : {}),
        ...(t.meta ? { _meta: t.meta } : {}),
      })),
    }));
    let guarded = false;
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      // The SDK writes the answer: its bytes stay counted until the response closes, and a client
      // that takes none of them is cut after the write timeout.
      const hold = held.open(identity.agentId);
      whenClosed(res, () => hold.release());
      try {
        return await callTool(identity, req, request.params as never, {
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
      const result = await callTool(identity, req, call.params, {
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
