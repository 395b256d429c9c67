/**
 * Sends one request of a bridged client to its provider through the upstream pool (which speaks
 * the provider's revision), and answers it in the client's; a tools/call goes through call-tool.
 */
import { withoutPlatformMeta } from '../identity/stamp.ts';
import { type JsonRpcResponse, RPC_ERRORS, rpcError } from '../internal/json-rpc.ts';
import { upstreamRequestHeaders } from '../passthrough/upstream-request.ts';
import { bridgeAnswer } from './answer.ts';
import { callTool } from './call-tool.ts';
import {
  type BridgeDeps,
  type BridgedRequest,
  type BridgeSide,
  failure,
  progressTokenOf,
  send,
  withInput,
} from './exchange.ts';

export type { BridgeDeps, BridgedRequest, BridgeSide } from './exchange.ts';

/** Sends `request` upstream and answers it (see the file's comment). */
export async function forwardBridged(deps: BridgeDeps, request: BridgedRequest, side: BridgeSide): Promise<void> {
  const answer = bridgeAnswer(request.req, request.res, progressTokenOf(request.params));
  const finish = (response: JsonRpcResponse) =>
    answer.end(
      response.result !== undefined
        ? { ...response, result: side.result(response.result as Record<string, unknown>, request.method) }
        : response,
      side.headers,
    );
  if (request.method === 'tools/call') return callTool(deps, request, side, answer, finish);
  const headers = await upstreamRequestHeaders(deps.pipeline, {
    req: request.req,
    identity: request.identity,
    call: undefined,
    audience: request.connector.url,
    upstreamSession: undefined,
  });
  const params = (withoutPlatformMeta({ params: request.params }).params ?? {}) as Record<string, unknown>;
  const sendRequest = (sent: Record<string, unknown>) => send(deps, request, side, answer, { params: sent, headers });
  let response: JsonRpcResponse | { refused: string };
  try {
    response = await withInput(deps, request, side, answer, await sendRequest(params), sendRequest, params);
  } catch (error) {
    return finish(rpcError(request.id, RPC_ERRORS.internal, `Upstream failed: ${failure(error)}.`));
  }
  if ('refused' in response) return finish(rpcError(request.id, RPC_ERRORS.internal, response.refused));
  finish({ ...response, id: request.id });
}
