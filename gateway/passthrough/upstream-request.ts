/** What a passthrough request takes upstream besides its body: the caller's headers that may go, the identity headers, the session. */
import type { IncomingMessage } from 'node:http';

import type { CallPipeline } from '../call-pipeline.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { UPSTREAM_AUTHORIZATION_HEADER, UPSTREAM_PROVIDER_HEADER, upstreamHeaders } from '../identity/stamp.ts';
import type { CallContext } from '../receipt-sink.ts';

/**
 * Request headers that stop here: hop-by-hop ones (RFC 9110 §7.6.1), ours to set (length, session),
 * and `expect`: the gateway has read the whole body already, and an upstream asked for
 * `100-continue` may refuse it (undici does).
 */
const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'accept-encoding',
  'upgrade',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'expect',
  'mcp-session-id',
]);

/**
 * Why the caller's third-party credential headers cannot go to `provider`, or undefined: the
 * credential sent more than once (Node would join the values into one, and the provider get both),
 * or an X-PLATFORM-Upstream-Provider naming another provider than the path's (the caller meant the
 * credential for that one).
 */
export function upstreamCredentialProblem(req: IncomingMessage, provider: string): string | undefined {
  if (req.headers[UPSTREAM_AUTHORIZATION_HEADER] === undefined && req.headers[UPSTREAM_PROVIDER_HEADER] === undefined)
    return undefined;
  const distinct = req.headersDistinct;
  if ((distinct[UPSTREAM_AUTHORIZATION_HEADER]?.length ?? 0) > 1)
    return 'Send X-PLATFORM-Upstream-Authorization once: it is one credential, for one provider.';
  const named = distinct[UPSTREAM_PROVIDER_HEADER];
  if (named === undefined) return undefined;
  if (named.length > 1 || named[0]!.trim() !== provider) {
    return `X-PLATFORM-Upstream-Provider names ${JSON.stringify(named.join(', ').slice(0, 80))}, not "${provider}" of this path; nothing was sent. Call /mcp/p/<provider> of the provider the credential is for.`;
  }
  return undefined;
}

/**
 * The headers a request goes upstream with: the caller's (less hop-by-hop ones), the identity
 * headers, and — for a call — its signed assertion for `audience`; the upstream session's id.
 */
export async function upstreamRequestHeaders(
  pipeline: CallPipeline,
  request: {
    req: IncomingMessage;
    identity: AgentIdentity;
    call: CallContext | undefined;
    audience: string;
    upstreamSession: string | undefined;
  },
): Promise<Record<string, string>> {
  const { req, identity, call, upstreamSession } = request;
  const signed = call && { callId: call.callId, assertion: await pipeline.sign(call, request.audience) };
  // Built whole rather than trimmed after (a deleted key leaves a slower object behind).
  const headers = upstreamHeaders(req.headers, identity, signed, HOP_BY_HOP);
  if (upstreamSession) headers['mcp-session-id'] = upstreamSession;
  return headers;
}
