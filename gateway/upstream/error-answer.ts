import { isResponse, type JsonRpcId, type JsonRpcResponse, parseJson } from '../internal/json-rpc.ts';
import { readBodyText } from '../internal/upstream-exchange.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';

/** The most of a refusal's body read for its JSON-RPC error (a refusal is a line or two). */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * The JSON-RPC error a non-2xx answer carries for request `id`, or undefined (the body is then
 * discarded). A 2026-07-28 server answers its errors so: -32601 under 404, -32020 (headers and
 * body disagree) and -32022 (unsupported revision) under 400. Its protocol-level refusals name
 * no id (null): they are about the request all the same, the only one in the POST.
 */
export async function errorAnswer(res: UpstreamHttpResponse, id: JsonRpcId): Promise<JsonRpcResponse | undefined> {
  if (!(res.header('content-type') ?? '').startsWith('application/json')) {
    res.discard();
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = parseJson(await readBodyText(res, MAX_ERROR_BODY));
  } catch {
    return undefined;
  }
  if (!isResponse(parsed) || !('error' in parsed) || typeof parsed.error?.code !== 'number') return undefined;
  if (parsed.id !== id && parsed.id !== null) return undefined;
  return { ...parsed, id } as JsonRpcResponse;
}

/** Whether an answer refuses the revision it was asked in (-32022, or the words a server of an earlier revision uses). */
export function refusesRevision(response: JsonRpcResponse): boolean {
  if (!('error' in response) || !response.error) return false;
  return response.error.code === -32022 || /unsupported protocol version/i.test(String(response.error.message));
}

/** The revisions a -32022 refusal says the server supports (`data.supported`), or none. */
export function supportedRevisions(response: JsonRpcResponse): string[] {
  const data = 'error' in response ? (response.error?.data as { supported?: unknown } | undefined) : undefined;
  return Array.isArray(data?.supported)
    ? data.supported.filter((v): v is string => typeof v === 'string').slice(0, 10)
    : [];
}
