/**
 * `resultType` on the results Plaza answers itself: MCP 2026-07-28 has every result say whether it
 * is `complete` or `input_required`, and a client of that revision (the SDK v2 client) refuses a
 * result without it. Results to earlier revisions stay as they were.
 */
import type { JsonRpcResponse } from './json-rpc-errors.ts';
import { isModernRevision } from './mcp-headers.ts';

/** `result` with `resultType: "complete"` when the request it answers is of `revision` 2026-07-28 or later. */
export function completeResult<T>(result: T, revision: string | undefined): T {
  if (!isModernRevision(revision) || typeof result !== 'object' || result === null) return result;
  return { ...result, resultType: 'complete' };
}

/** `response` with its result marked complete (see completeResult); an error response as it is. */
export function completeResponse(response: JsonRpcResponse, revision: string | undefined): JsonRpcResponse {
  if (response.result === undefined || !isModernRevision(revision)) return response;
  return { ...response, result: completeResult(response.result, revision) };
}
