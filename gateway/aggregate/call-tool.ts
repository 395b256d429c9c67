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
import { callAnswer, MAX_JSON_DEPTH, rawJsonText, STORAGE_UNAVAILABLE } from '../internal/json-rpc.ts';
import { callSecrets } from '../internal/receipt-redaction.ts';
import { type CallContext, MAX_TOOL_NAME_LENGTH } from '../receipt-sink.ts';
import { describeIssues } from '../server-sdk.ts';
import { UpstreamCallError } from '../upstream-client.ts';
import type { UpstreamPool } from '../upstream-pool.ts';
import { type CatalogConnector, type LocalProvider, TOOL_NAME_SEPARATOR, type ToolCatalog } from './catalog.ts';
import { upstreamProviderOf } from './upstream-credential.ts';

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

/** What the caller's side of the call offers: its cancellation, its progress, and where the answer's bytes are counted. */
export interface ToolCallExtra {
  signal: AbortSignal;
  sendNotification: (n: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }) => Promise<void>;
  /** Where the answer's bytes are counted while it is read (held-answers). */
  hold?: AnswerHold;
}

/**
 * The caller's headers a call takes upstream. Not MCP-Protocol-Version: it names the caller's
 * version with /mcp, and the pooled session speaks the one its provider agreed to (see the pool).
 */
const FORWARDED = new Set(['user-agent', 'accept-language']);
/** A receipt's provider holds at most this many characters. */
const MAX_PROVIDER_LENGTH = 200;
/** The provider of a receipt for a call that named none Plaza could use (no slug holds parentheses). */
const UNKNOWN_PROVIDER = '(unknown)';

const tooLongName = (): CallToolResult => ({
  content: [{ type: 'text', text: `Tool names are at most ${MAX_TOOL_NAME_LENGTH} characters; nothing was called.` }],
  isError: true,
});

/** A number, or a raw JSON number (past 2^53) as the nearest number; else undefined. */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  const raw = rawJsonText(value);
  return raw === undefined ? undefined : Number(raw);
}

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
  const { outcome, result } = await forward(deps, { call, connector, req, params, extra });
  return pipeline.settle(call, outcome, result) as Promise<CallToolResult>;
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
  },
): Promise<{ outcome: CallOutcome; result: Record<string, unknown> }> {
  const { call, connector, req, params, extra } = sending;
  const { identity, provider, tool } = call;
  const assertion = await deps.pipeline.sign(call, connector.url);
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
  try {
    deps.pipeline.forwarding(call);
    const response = await deps.pool.request({
      url: connector.url,
      revisions: connector.protocolVersions,
      method: 'tools/call',
      params: upstreamParams,
      headers,
      signal: extra.signal,
      onBytes: extra.hold
        ? (size) => (extra.hold!.set(size) ? undefined : heldAnswerDropped(deps.held.limits))
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
      throw new UpstreamCallError(heldAnswerDropped(deps.held.limits));
    const answer = callAnswer(response);
    const valid = 'result' in answer ? CallToolResultSchema.safeParse(answer.result) : undefined;
    if ('error' in answer)
      return {
        outcome: { error: answer.error },
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
    const why = error instanceof UpstreamCallError ? error.message : 'the upstream call failed';
    return {
      outcome: { failure: why },
      result: { content: [{ type: 'text', text: `Call failed: ${why}.` }], isError: true },
    };
  }
}
