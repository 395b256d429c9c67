/**
 * A tools/call on `/mcp`: the tool's provider found (a connector of the catalog, or the local
 * provider), the call authorized, opened, signed and sent through the pooled upstream session,
 * then receipted and stamped — every step the gateway's CallPipeline.
 */
import type { IncomingMessage } from 'node:http';

import { type CallToolResult, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { nestsDeeperThan } from '../../src/kernel/index.ts';
import type { CallOutcome, CallPipeline } from '../call-pipeline.ts';
import { type AnswerHold, heldAnswerDropped, type HeldAnswers } from '../held-answers.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { stampCallParams, UPSTREAM_AUTHORIZATION_HEADER, upstreamHeaders } from '../identity/stamp.ts';
import { callAnswer, MAX_JSON_DEPTH, STORAGE_UNAVAILABLE } from '../internal/json-rpc.ts';
import { callSecrets } from '../internal/receipt-redaction.ts';
import { RPC_ERRORS } from '../json-rpc-errors.ts';
import { type CallContext, MAX_TOOL_NAME_LENGTH } from '../receipt-sink.ts';
import { describeIssues } from '../server-sdk.ts';
import type { PooledCall } from '../upstream/pooled-call.ts';
import { UpstreamCallError } from '../upstream-client.ts';
import type { UpstreamPool } from '../upstream-pool.ts';
import { cancelledBy } from './cancellation.ts';
import { type CatalogConnector, type LocalProvider, TOOL_NAME_SEPARATOR, type ToolCatalog } from './catalog.ts';
import { type ClientAsks, serverRequestsTo, withClientInput } from './client-asks.ts';
import { toolInputSchema } from './param-check.ts';
import { type NotifyAgent, relayTo } from './relay.ts';
import { CallerRpcError, relayedError, type RelayedRpcError } from './relayed-error.ts';
import { MAX_SEALED_STATE, type RequestStates } from './request-state.ts';
import { callerHeaders, withoutEnvelope } from './upstream-request.ts';

/** What callTool uses. */
export interface ToolCallDeps {
  pipeline: CallPipeline;
  catalog: ToolCatalog;
  local: LocalProvider | undefined;
  pool: UpstreamPool;
  held: HeldAnswers;
  onCall: ((endpointId: string) => void) | undefined;
}

/** A tools/call's params as `/mcp` takes them. */
export interface ToolCallParams {
  name: string;
  arguments?: unknown;
  _meta?: Record<string, unknown>;
}

/** What the caller's side of the call offers: its cancellation, its stream, and where the answer's bytes are counted. */
export interface ToolCallExtra {
  signal: AbortSignal;
  /** Sends progress and log messages on the caller's request's stream. */
  notify: NotifyAgent;
  /** Where the answer's bytes are counted while it is read (held-answers). */
  hold?: AnswerHold;
  /** The capabilities the caller declared on a 2026-07-28 request (they go upstream with it). */
  clientCapabilities?: Record<string, unknown> | undefined;
  /** A 2026-07-28 call made again with the inputs a provider asked for: the responses and the sealed state. */
  inputRound?: { inputResponses?: Record<string, unknown> | undefined; requestState?: string | undefined };
  /** The least severe log message the caller wants relayed (2026-07-28 `logLevel`); absent: all. */
  logLevel?: string | undefined;
  /** How this agent's request states are sealed; absent for a 2025 caller (no round trip can reach it). */
  states?: RequestStates | undefined;
  /** What a 2025 caller in a session (see client-session) can be asked during the call; absent: nothing. */
  asks?: ClientAsks | undefined;
}

/** A receipt's provider holds at most this many characters. */
const MAX_PROVIDER_LENGTH = 200;
/** The provider of a receipt for a call that named none Plaza could use (no slug holds parentheses). */
const UNKNOWN_PROVIDER = '(unknown)';

const tooLongName = (): CallToolResult => ({
  content: [{ type: 'text', text: `Tool names are at most ${MAX_TOOL_NAME_LENGTH} characters; nothing was called.` }],
  isError: true,
});

/** Calls the tool `params.name` (`<provider>__<tool>`) for `identity`; every outcome is a result, receipted. */
export async function callTool(
  deps: ToolCallDeps,
  identity: AgentIdentity,
  req: IncomingMessage,
  params: ToolCallParams,
  extra: ToolCallExtra,
): Promise<CallToolResult> {
  const { pipeline } = deps;
  const split = params.name.indexOf(TOOL_NAME_SEPARATOR);
  const provider = split > 0 ? params.name.slice(0, split) : '';
  const tool = split > 0 ? params.name.slice(split + TOOL_NAME_SEPARATOR.length) : '';
  // A call refused before any connector is asked is still a tools/call of this agent's: it gets a
  // call id, the stamp and an `error` receipt, like every other (an auditor sees the attempt),
  // unless its name is longer than a receipt holds.
  const refuse = async (why: string): Promise<CallToolResult> => {
    if (params.name.length > MAX_TOOL_NAME_LENGTH) return tooLongName();
    const named =
      provider && tool && provider.length <= MAX_PROVIDER_LENGTH
        ? { provider, tool }
        : { provider: UNKNOWN_PROVIDER, tool: params.name };
    const call = pipeline.open({ identity, ...named, path: 'aggregate' });
    const said = `${why[0]!.toUpperCase()}${why.slice(1)}.`;
    try {
      await pipeline.record(call, { refused: why });
    } catch {
      // Nothing was called: the refusal stands, without a call id that would name no receipt,
      // and says that none records it (sync receipts are stored before the answer leaves).
      return { content: [{ type: 'text', text: `${said} Plaza could not record its receipt.` }], isError: true };
    }
    return pipeline.stamp(call, { content: [{ type: 'text', text: said }], isError: true }) as CallToolResult;
  };
  /** Asks the authorize hook; the words of its refusal, if it refused. */
  const refusedBy = async (
    annotations?: () => Readonly<Record<string, unknown>> | undefined,
  ): Promise<string | undefined> => {
    const authorization = await pipeline.authorize({ identity, provider, method: 'tools/call', tool, annotations });
    return authorization.allowed ? undefined : `${pipeline.refusal(authorization)}; nothing was called`;
  };
  if (nestsDeeperThan(params.arguments, MAX_JSON_DEPTH))
    return refuse(`tool arguments nest deeper than ${MAX_JSON_DEPTH} levels; nothing was called`);
  const local = deps.local;
  if (local && provider === local.provider && tool) {
    if (tool.length > MAX_TOOL_NAME_LENGTH) return tooLongName();
    const refusal = await refusedBy(() => local.tools().find((t) => t.name === tool)?.annotations);
    if (refusal !== undefined) return refuse(refusal);
    const call = pipeline.open({ identity, provider, tool, path: 'aggregate' });
    const result = await local.call(identity, tool, params.arguments ?? {}, call.callId);
    return pipeline.settle(call, { result }, result) as Promise<CallToolResult>;
  }
  let connector: CatalogConnector | undefined;
  let needsCredential: boolean;
  try {
    connector = provider ? await deps.catalog.byProvider(provider) : undefined;
    needsCredential = !connector && provider !== '' && tool !== '' && (await deps.catalog.needsCredential(provider));
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
  if (tool.length > MAX_TOOL_NAME_LENGTH) return tooLongName();
  // Its provider would answer a plain call with an error, and /mcp declares no tasks capability.
  if (connector.taskOnlyTools?.has(tool)) {
    return refuse(
      `tool ${params.name} runs only as a task (execution.taskSupport "required"), which /mcp does not relay: call it as a task on /mcp/p/${provider}; nothing was called`,
    );
  }
  const refusal = await refusedBy();
  if (refusal !== undefined) return refuse(refusal);
  let upstreamState: { state?: string } | undefined;
  const sealed = extra.inputRound?.requestState;
  if (sealed !== undefined) {
    const opened = extra.states ? await extra.states.open(sealed) : undefined;
    if (!opened || opened.provider !== provider) {
      // A state that fails its integrity check is refused as the request's error (MCP
      // 2026-07-28: servers MUST reject it), never taken for absent; receipted as refused.
      const why = `the requestState was not issued by Plaza for a call of ${params.name} by this agent; nothing was called`;
      await refuse(why);
      throw new CallerRpcError({
        code: RPC_ERRORS.invalidParams,
        message: `Invalid params: ${why[0]!.toUpperCase()}${why.slice(1)}.`,
      });
    }
    upstreamState = opened;
  }
  // An agent (or an instance) holding as many unread answers as it may gets no more until some are read.
  const busy = deps.held.refusal(identity.agentId);
  if (busy) return refuse(`${busy}; nothing was called`);
  const call = pipeline.open({
    identity,
    provider,
    tool,
    path: 'aggregate',
    secrets: callSecrets(req.headers[UPSTREAM_AUTHORIZATION_HEADER]),
  });
  deps.onCall?.(connector.endpointId);
  const { outcome, result, relayed } = await forward(deps, { call, connector, req, params, extra, upstreamState });
  if (relayed) {
    // The caller gets the provider's error itself once its receipt is recorded (else the
    // settled result says that none records it).
    const recorded = await pipeline.record(call, outcome).then(
      () => true,
      () => false,
    );
    if (recorded) throw new CallerRpcError(relayed);
  }
  return pipeline.settle(call, outcome, result) as Promise<CallToolResult>;
}

/**
 * A provider's `input_required` answer (2026-07-28): to a 2026-07-28 caller as it came, its
 * `requestState` sealed for this agent and provider (see request-state); a 2025 caller cannot be
 * asked, so the call fails in-band, naming `/mcp/p/<provider>`. Receipted either way.
 */
async function inputRequired(
  result: Record<string, unknown>,
  provider: string,
  extra: ToolCallExtra,
): Promise<{ outcome: CallOutcome; result: Record<string, unknown> }> {
  if (!extra.states) {
    const why = `the provider asks the caller for input (multi round trip), which /mcp passes only to a 2026-07-28 client; call it through /mcp/p/${provider}`;
    return {
      outcome: { failure: why },
      result: { content: [{ type: 'text', text: `Call failed: ${why}.` }], isError: true },
    };
  }
  const state = typeof result['requestState'] === 'string' ? result['requestState'] : undefined;
  const sealed = await extra.states.seal(provider, state);
  if (sealed.length > MAX_SEALED_STATE) {
    const why = `the provider's requestState is longer than Plaza carries; call it through /mcp/p/${provider}`;
    return {
      outcome: { failure: why },
      result: { content: [{ type: 'text', text: `Call failed: ${why}.` }], isError: true },
    };
  }
  return { outcome: { result }, result: { ...result, requestState: sealed } };
}

/** The provider's error a 2026-07-28 caller (it declared capabilities) gets as that error, if it is one. */
function relayedTo(extra: ToolCallExtra, response: unknown): { relayed?: RelayedRpcError } {
  const relayed =
    extra.clientCapabilities === undefined || extra.asks !== undefined ? undefined : relayedError(response);
  return relayed ? { relayed } : {};
}

/** Sends the opened call upstream through the pool: its outcome for the receipt, and the result the caller gets. */
async function forward(
  deps: ToolCallDeps,
  sending: {
    call: CallContext;
    connector: CatalogConnector;
    req: IncomingMessage;
    params: ToolCallParams;
    extra: ToolCallExtra;
    /** The provider's own state of a round trip the caller continues. */
    upstreamState?: { state?: string } | undefined;
  },
): Promise<{ outcome: CallOutcome; result: Record<string, unknown>; relayed?: RelayedRpcError }> {
  const { call, connector, req, params, extra, upstreamState } = sending;
  const { identity, provider, tool } = call;
  const assertion = await deps.pipeline.sign(call, connector.url);
  const headers = upstreamHeaders(callerHeaders(req, provider), identity, call.callId, assertion);
  const upstreamParams = stampCallParams(
    withoutEnvelope({
      name: tool,
      arguments: params.arguments ?? {},
      _meta: params._meta,
      ...(extra.inputRound?.inputResponses === undefined ? {} : { inputResponses: extra.inputRound.inputResponses }),
      ...(upstreamState?.state === undefined ? {} : { requestState: upstreamState.state }),
    }),
    identity,
    call.callId,
  );
  try {
    deps.pipeline.forwarding(call);
    const sending: PooledCall = {
      url: connector.url,
      method: 'tools/call',
      params: upstreamParams,
      headers,
      signal: extra.signal,
      revisions: connector.protocolVersions,
      clientCapabilities: extra.clientCapabilities,
      // A 2026-07-28 provider gets the Mcp-Param-* headers its tool's schema declares.
      toolInputSchema: await toolInputSchema(deps.catalog, undefined, params.name).catch(() => undefined),
      onBytes: extra.hold
        ? (size) => (extra.hold!.set(size) ? undefined : heldAnswerDropped(deps.held.limits))
        : undefined,
      // Without a session (see client-session) /mcp has no client to ask: the provider's request
      // is refused (see docs/decisions/gateway.md, "/mcp answers an upstream's requests itself").
      refusal: (method) =>
        `Plaza's aggregate endpoint /mcp cannot pass ${method} on to the agent; an agent that supports it can call this tool through /mcp/p/${provider}.`,
      ...(extra.asks ? { onServerRequest: serverRequestsTo(extra.asks) } : {}),
      onNotification: relayTo(extra.notify, params._meta?.['progressToken'], extra.logLevel),
    };
    const first = await deps.pool.request(sending);
    // A 2025 client in a session is asked what a 2026-07-28 provider's input_required needs.
    const response = extra.asks
      ? await withClientInput(extra.asks, first, (inputResponses, requestState) =>
          deps.pool.request({
            ...sending,
            params: { ...upstreamParams, inputResponses, ...(requestState === undefined ? {} : { requestState }) },
          }),
        )
      : first;
    if ('refused' in response) {
      const why = `provider "${provider}" asked for the client's input, but ${response.refused}`;
      return {
        outcome: { failure: why },
        result: { content: [{ type: 'text', text: `Call failed: ${why}.` }], isError: true },
      };
    }
    // Read whole: it will be delivered (or its connection cut), not let go for another.
    if (extra.hold && !extra.hold.keep() && !extra.signal.aborted)
      throw new UpstreamCallError(heldAnswerDropped(deps.held.limits));
    const answer = callAnswer(response);
    if ('result' in answer && answer.result['resultType'] === 'input_required')
      return inputRequired(answer.result, call.provider, extra);
    const valid = 'result' in answer ? CallToolResultSchema.safeParse(answer.result) : undefined;
    if ('error' in answer)
      return {
        outcome: { error: answer.error },
        // A 2026-07-28 caller (it declared capabilities) gets a -32021 as that error.
        ...relayedTo(extra, response),
        result: {
          content: [{ type: 'text', text: `Upstream error ${answer.error.code}: ${answer.error.message}` }],
          isError: true,
        },
      };
    if ('malformed' in answer || !valid?.success) {
      // Recorded as what the caller gets: a failed call, not a success it never sees.
      const why =
        'malformed' in answer
          ? answer.malformed
          : `the upstream answered an invalid tools/call result (${describeIssues(valid!.error!.issues)})`;
      return {
        outcome: { failure: why },
        result: { content: [{ type: 'text', text: `Call failed: ${why}.` }], isError: true },
      };
    }
    return { outcome: { result: answer.result }, result: answer.result };
  } catch (error) {
    if (extra.signal.aborted && cancelledBy(extra.signal))
      return {
        outcome: { cancelled: cancelledBy(extra.signal)! },
        result: { content: [{ type: 'text', text: 'Call cancelled by the caller.' }], isError: true },
      };
    const why = error instanceof UpstreamCallError ? error.message : 'the upstream call failed';
    return {
      outcome: { failure: why },
      result: { content: [{ type: 'text', text: `Call failed: ${why}.` }], isError: true },
    };
  }
}
