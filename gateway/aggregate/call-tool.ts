/**
 * A tools/call on `/mcp`: the tool's provider found (a connector of the catalog, or the local
 * provider), the call authorized, opened, signed and sent through the pooled upstream session,
 * then receipted and stamped — every step the gateway's CallPipeline. The upstream leg (the call
 * sent, its answer read) is call-upstream's.
 */
import type { IncomingMessage } from 'node:http';

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { nestsDeeperThan } from '../../src/kernel/index.ts';
import type { CallPipeline } from '../call-pipeline.ts';
import type { AnswerHold, HeldAnswers } from '../held-answers.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { UPSTREAM_AUTHORIZATION_HEADER } from '../identity/stamp.ts';
import { MAX_JSON_DEPTH, STORAGE_UNAVAILABLE } from '../internal/json-rpc.ts';
import { callSecrets } from '../internal/receipt-redaction.ts';
import { RPC_ERRORS } from '../json-rpc-errors.ts';
import { MAX_TOOL_NAME_LENGTH } from '../receipt-sink.ts';
import type { UpstreamPool } from '../upstream-pool.ts';
import { forward } from './call-upstream.ts';
import { type CatalogConnector, type LocalProvider, TOOL_NAME_SEPARATOR, type ToolCatalog } from './catalog.ts';
import type { ClientAsks } from './client-asks.ts';
import type { NotifyAgent } from './relay.ts';
import { CallerRpcError } from './relayed-error.ts';
import type { RequestStates } from './request-state.ts';

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
