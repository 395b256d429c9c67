/**
 * The upstream leg of a tools/call on `/mcp`: the opened call signed, stamped and sent through the
 * pooled upstream session, and the answer read into the outcome its receipt records and the
 * result the caller gets (a provider's error, input_required, a malformed answer, a cancellation).
 * Apart from callTool, which finds the provider and refuses what it must before anything is sent.
 */
import type { IncomingMessage } from 'node:http';

import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

import type { CallOutcome } from '../call-pipeline.ts';
import { heldAnswerDropped } from '../held-answers.ts';
import { stampCallParams, upstreamHeaders } from '../identity/stamp.ts';
import { callAnswer } from '../internal/json-rpc.ts';
import type { CallContext } from '../receipt-sink.ts';
import { describeIssues } from '../server-sdk.ts';
import type { PooledCall } from '../upstream/pooled-call.ts';
import { UpstreamCallError } from '../upstream-client.ts';
import type { ToolCallDeps, ToolCallExtra, ToolCallParams } from './call-tool.ts';
import { cancelledBy } from './cancellation.ts';
import type { CatalogConnector } from './catalog.ts';
import { serverRequestsTo, withClientInput } from './client-asks.ts';
import { toolInputSchema } from './param-check.ts';
import { relayTo } from './relay.ts';
import { relayedError, type RelayedRpcError } from './relayed-error.ts';
import { MAX_SEALED_STATE } from './request-state.ts';
import { callerHeaders, withoutEnvelope } from './upstream-request.ts';

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
export async function forward(
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
  const headers = upstreamHeaders(callerHeaders(req, provider), identity, { callId: call.callId, assertion });
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
