import type { AginCard } from './agin-card.ts';

/** `_meta.platform` of a tools/call request (spec §2.4). */
export interface PlatformCallMeta {
  agin_id: string;
  agent_principal: string;
  display_name: string;
  owner_context: string;
  call_id: string;
}

/** `result._meta.platform` of a tools/call result (spec §2.4). */
export interface PlatformResultMeta {
  agin_id: string;
  call_id: string;
  receipt_hint: string;
  /**
   * A task's result fetched with tasks/result (MCP tasks): the call id its own receipt is kept
   * under; `call_id` is the id of the call that created the task.
   */
  result_call_id?: string;
}

/** The identity headers of the remote transport (spec §2.5), lower-cased. */
export const IDENTITY_HEADERS = {
  aginId: 'x-platform-agin-id',
  agentPrincipal: 'x-platform-agent-principal',
  callId: 'x-platform-call-id',
  assertion: 'x-platform-agin-assertion',
} as const;

/** The header a caller sends its third-party credential in; it goes upstream as `Authorization`. */
export const UPSTREAM_AUTHORIZATION_HEADER = 'x-platform-upstream-authorization';
/** Names the one provider a caller's X-PLATFORM-Upstream-Authorization is for (on /mcp, required with it). */
export const UPSTREAM_PROVIDER_HEADER = 'x-platform-upstream-provider';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Returns tools/call `params` with `_meta.platform` set to the caller's card and `callId`. Any
 * `_meta.platform` the caller sent is discarded, never merged; other `_meta` keys (progress
 * tokens…) are kept.
 */
export function stampCallParams(params: unknown, card: AginCard, callId: string): Record<string, unknown> {
  const base = isRecord(params) ? params : {};
  const meta = isRecord(base['_meta']) ? { ...base['_meta'] } : {};
  const platform: PlatformCallMeta = {
    agin_id: card.aginId,
    agent_principal: card.agentPrincipal,
    display_name: card.displayName,
    owner_context: card.ownerContext,
    call_id: callId,
  };
  meta['platform'] = platform;
  return { ...base, _meta: meta };
}

/**
 * A message other than the call, as it may go upstream: any `params._meta.platform` the caller put
 * on it is dropped (identity in `_meta.platform` is Plaza's to state, on any method).
 */
export function withoutPlatformMeta<T>(message: T): T {
  if (
    !isRecord(message) ||
    !isRecord(message['params']) ||
    !isRecord(message['params']['_meta']) ||
    !('platform' in message['params']['_meta'])
  )
    return message;
  const { platform: _dropped, ...meta } = message['params']['_meta'];
  return { ...message, params: { ...message['params'], _meta: meta } };
}

/** The advice a result carries to its provider (spec §2.4 `receipt_hint`). */
export function receiptHint(card: AginCard, callId: string, resultCallId?: string): string {
  const receipts =
    resultCallId === undefined || resultCallId === callId
      ? 'a receipt under the same call_id'
      : `a receipt under the same call_id, and this task result's own under call_id ${resultCallId}`;
  return `Log agin_id ${card.aginId} with call_id ${callId} and the tool outcome; Plaza keeps ${receipts}.`;
}

/**
 * Returns a tools/call `result` with `_meta.platform` {agin_id, call_id, receipt_hint} set,
 * replacing whatever the upstream put there; a task's result (tasks/result) also gets
 * `result_call_id`, the id its own receipt is kept under.
 */
export function stampResult(
  result: unknown,
  card: AginCard,
  callId: string,
  resultCallId?: string,
): Record<string, unknown> {
  const base = isRecord(result) ? result : {};
  const meta = isRecord(base['_meta']) ? { ...base['_meta'] } : {};
  const platform: PlatformResultMeta = {
    agin_id: card.aginId,
    call_id: callId,
    receipt_hint: receiptHint(card, callId, resultCallId),
  };
  if (resultCallId !== undefined) platform.result_call_id = resultCallId;
  meta['platform'] = platform;
  return { ...base, _meta: meta };
}

/**
 * Headers that claim where a request came from (RFC 7239 `Forwarded`, the de facto `X-Forwarded-*`
 * and client-address headers of proxies and CDNs): the caller's are its word, not Plaza's, and a
 * provider may count quotas or abuse by them. Plaza sends none of its own (see
 * docs/decisions/gateway.md, "Providers get no client-address headers").
 */
const CLIENT_ADDRESS = new Set([
  'forwarded',
  'via',
  'x-real-ip',
  'x-client-ip',
  'true-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
  'x-cluster-client-ip',
  'x-original-forwarded-for',
]);

/** Whether the caller's header `name` (lower case, `_` read as `-`) says where the request came from. */
function claimsClientAddress(name: string): boolean {
  return name.startsWith('x-forwarded-') || CLIENT_ADDRESS.has(name);
}

/**
 * Headers to send upstream: the caller's headers minus every identity header, credential and
 * client-address claim (X-Forwarded-For and the like) they sent, minus the headers their
 * `Connection` names (hop-by-hop) and those `drop` names (lower case), plus Plaza's identity
 * headers — with the call's id and assertion for a call; the caller's third-party credential
 * (X-PLATFORM-Upstream-Authorization) becomes `Authorization`.
 */
export function upstreamHeaders(
  callerHeaders: Readonly<Record<string, string | string[] | undefined>>,
  card: AginCard,
  call: { callId: string; assertion: string } | undefined,
  drop?: ReadonlySet<string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const connection = callerHeaders['connection'] ?? findHeader(callerHeaders, 'connection');
  const hopByHop = new Set(
    String(connection ?? '')
      .split(',')
      .map((token) => token.trim().toLowerCase().replaceAll('_', '-')),
  );
  for (const [rawName, value] of Object.entries(callerHeaders)) {
    const name = rawName.toLowerCase();
    // X_PLATFORM_… and X_FORWARDED_… too: CGI-style servers read `_` and `-` as one.
    const read = name.replaceAll('_', '-');
    if (
      value === undefined ||
      read.startsWith('x-platform-') ||
      name === 'authorization' ||
      name === 'cookie' ||
      claimsClientAddress(read) ||
      hopByHop.has(read) ||
      drop?.has(name)
    )
      continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const thirdParty =
    callerHeaders[UPSTREAM_AUTHORIZATION_HEADER] ?? findHeader(callerHeaders, UPSTREAM_AUTHORIZATION_HEADER);
  if (typeof thirdParty === 'string' && thirdParty.trim() !== '') out['authorization'] = thirdParty.trim();
  out[IDENTITY_HEADERS.aginId] = card.aginId;
  out[IDENTITY_HEADERS.agentPrincipal] = card.agentPrincipal;
  if (call) {
    out[IDENTITY_HEADERS.callId] = call.callId;
    out[IDENTITY_HEADERS.assertion] = call.assertion;
  }
  return out;
}

function findHeader(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  name: string,
): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}
