import { nestsDeeperThan } from '../../src/kernel/index.ts';
import { type JsonRpcId, type JsonRpcResponse, RPC_ERRORS, rpcError } from '../json-rpc-errors.ts';

// One home for the shapes and errors src/ uses too (../json-rpc-errors.ts); the gateway's files keep one import.
export { type JsonRpcId, type JsonRpcResponse, RPC_ERRORS, rpcError };

/** JSON-RPC 2.0 request shape the gateway looks into (everything else passes through). */
export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: unknown;
}

/** What a client that cut its request body short is told (if it is still there to hear it). */
export const BODY_CUT = 'The request body ended before its declared length (the connection was cut).';

/**
 * What a caller is told when Plaza cannot read its own storage (agent credentials, the connector
 * catalog) — a database outage: nothing was called upstream, and retrying shortly is safe.
 */
export const STORAGE_UNAVAILABLE =
  'Plaza cannot reach its database right now, so nothing was called; retry in a few seconds.';
/**
 * What a caller is told of a call that ran but whose receipt could be stored nowhere (neither the
 * database nor the spool took it): its result is not given out unreceipted, on either entry point.
 */
export const RECEIPT_UNRECORDED = 'The call ran but Plaza could not record its receipt; treat its outcome as unknown.';
/** Retry-After (seconds) sent with STORAGE_UNAVAILABLE. */
export const STORAGE_RETRY_AFTER_S = '2';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a request (has method and an id). Notifications have no id. */
export function isRequest(message: unknown): message is JsonRpcRequest {
  return isRecord(message) && typeof message['method'] === 'string' && 'id' in message && message['id'] !== undefined;
}

/** True for a response (result or error, no method). */
export function isResponse(message: unknown): message is JsonRpcResponse {
  return isRecord(message) && !('method' in message) && ('result' in message || 'error' in message);
}

/** The members the gateway reads or writes, by level: a message, its params, their _meta. */
const PROTOCOL_MEMBERS = {
  message: ['jsonrpc', 'id', 'method', 'params', 'result', 'error'],
  params: ['name', 'arguments', '_meta', 'task'],
  meta: ['platform', 'progressToken'],
} as const;
const FOLDED_MEMBERS = Object.fromEntries(
  Object.entries(PROTOCOL_MEMBERS).map(([level, names]) => [level, new Map(names.map((n) => [foldCase(n), n]))]),
) as Record<keyof typeof PROTOCOL_MEMBERS, Map<string, string>>;

/**
 * A member name as a case-insensitive JSON decoder matches it (Go's encoding/json, say: Unicode
 * simple folding, under which the long s and the Kelvin sign are "s" and "k").
 */
function foldCase(name: string): string {
  return name.toLowerCase().replaceAll('\u017f', 's');
}

/** The member of `object` that a case-insensitive decoder would take for one of `level`'s names, or for another member (`_Meta` beside `_meta`). */
function caseVariantIn(object: Record<string, unknown>, level: keyof typeof PROTOCOL_MEMBERS): string | undefined {
  const seen = new Set<string>();
  for (const key of Object.keys(object)) {
    const folded = foldCase(key);
    const member = FOLDED_MEMBERS[level].get(folded);
    if ((member !== undefined && member !== key) || seen.has(folded)) return key;
    seen.add(folded);
  }
  return undefined;
}

/**
 * A member name in `message` that differs from an MCP member's (or from a sibling's) only in
 * letter case — `"Method"`, `"_Meta"`, `"PLATFORM"` — or undefined. The gateway reads members by
 * their exact names; a provider whose JSON decoder matches names case-insensitively would read
 * the variant instead (the last of two wins in Go's encoding/json), and run a tool the receipt
 * does not name or see an identity the gateway did not stamp. Checked on the message, its params
 * and their _meta: everything the gateway routes, receipts or stamps by.
 */
export function caseVariantMember(message: unknown): string | undefined {
  if (!isRecord(message)) return undefined;
  const params = message['params'];
  const meta = isRecord(params) ? params['_meta'] : undefined;
  return (
    caseVariantIn(message, 'message') ??
    (isRecord(params) ? caseVariantIn(params, 'params') : undefined) ??
    (isRecord(meta) ? caseVariantIn(meta, 'meta') : undefined)
  );
}

/** What Node's JSON offers beyond ES2024's typings: raw JSON text that JSON.stringify writes as is. */
const rawJson = JSON as unknown as {
  rawJSON(text: string): object;
  isRawJSON(value: unknown): value is { rawJSON: string };
};

/** A run of digits long enough to hold an integer past 2^53 (16 digits or more). */
const LONG_DIGITS = /\d{16}/;
const INTEGER = /^-?\d+$/;

/**
 * JSON.parse that keeps an integer past 2^53 as written (a raw JSON value), so a message the
 * gateway re-serialises on its way through — stamped, its id mapped — carries the caller's and the
 * upstream's numbers unchanged (64-bit ids in tool arguments and results), not rounded. Only text
 * with a run of 16 digits takes the slower path.
 */
export function parseJson(text: string): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' &&
    !Number.isSafeInteger(value) &&
    context?.source !== undefined &&
    INTEGER.test(context.source)
      ? rawJson.rawJSON(context.source)
      : value,
  );
}

/** The text of a raw JSON value parseJson kept, or undefined for any other value. */
export function rawJsonText(value: unknown): string | undefined {
  return rawJson.isRawJSON(value) ? value.rawJSON : undefined;
}

/**
 * Deepest nesting the gateway accepts in a caller's message or an upstream's answer. Deeper JSON
 * parses (V8's parser does not recurse) but overflows the stack of anything that walks it after
 * (JSON.stringify, the result digest), so it is refused where it enters, in words.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * What an upstream's response to a tools/call says, checked: a result object, a JSON-RPC error
 * with a numeric code and a string message, or `malformed` (the words say how) — which the
 * gateway records and answers as a failed call, never as a success or an error it made up.
 */
export function callAnswer(
  message: JsonRpcResponse,
  /** The method answered, as the words for a malformed answer name it. */
  method = 'tools/call',
): { result: Record<string, unknown> } | { error: { code: number; message: string } } | { malformed: string } {
  const error = (message as { error?: unknown }).error;
  if (error !== undefined) {
    if (
      !isRecord(error) ||
      typeof error['code'] !== 'number' ||
      !Number.isFinite(error['code']) ||
      typeof error['message'] !== 'string' ||
      'result' in message
    ) {
      return { malformed: 'the upstream answered a malformed JSON-RPC error' };
    }
    return { error: { code: error['code'], message: error['message'] } };
  }
  if (!isRecord(message.result)) return { malformed: `the upstream answered a ${method} result that is not an object` };
  if (nestsDeeperThan(message.result, MAX_JSON_DEPTH))
    return { malformed: `the upstream's result nests deeper than ${MAX_JSON_DEPTH} levels` };
  return { result: message.result };
}

/** The id of a JSON-RPC request an answer can carry back (a string, or an integer up to 2^53), else undefined. */
function answerableId(message: unknown): string | number | undefined {
  if (!isRecord(message) || typeof message['method'] !== 'string') return undefined;
  const id = message['id'];
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : undefined;
}

/**
 * The error answer to a body Plaza cannot serve for now (STORAGE_UNAVAILABLE), under the ids of
 * the requests it holds: one error for a single request, one per request of a batch (a client
 * matches answers by id); id null when the body holds no request whose id can be answered.
 */
export function storageUnavailable(body: unknown): JsonRpcResponse | JsonRpcResponse[] {
  const ids = (Array.isArray(body) ? body : [body]).map(answerableId).filter((id) => id !== undefined);
  const answer = (id: JsonRpcId) => rpcError(id, RPC_ERRORS.internal, STORAGE_UNAVAILABLE);
  return Array.isArray(body) && ids.length > 0 ? [...new Set(ids)].map(answer) : answer(ids[0] ?? null);
}

/** A tools/call result that reports a failure in-band (spec §7: never a success). */
export function toolErrorResult(id: JsonRpcId, message: string): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: message }], isError: true } };
}

/**
 * The messages of a JSON batch answer with only the first answer to each request id (a second one
 * is a provider's mistake); errors without an id (several requests may fail to parse) all stay.
 */
export function firstAnswers(messages: unknown[]): unknown[] {
  const seen = new Set<JsonRpcId>();
  return messages.filter((m) => {
    if (!isResponse(m) || m.id === null) return true;
    if (seen.has(m.id)) return false;
    seen.add(m.id);
    return true;
  });
}

/** Why a request body larger than `limit` bytes is refused (HTTP 413, -32600), on every gateway endpoint alike. */
export function bodyTooLarge(limit: number): string {
  return `Request body exceeds ${limit} bytes.`;
}

/** Why a body whose bytes are not UTF-8 is refused (RFC 8259 §8.1: such text is no JSON). */
export const NOT_UTF8 = 'Parse error: the request body is not valid UTF-8.';
