/** The requests `/mcp` refuses on their HTTP method, protocol revision or credential headers, before reading a body. */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { GatewayError, sendGatewayError } from '../error-table.ts';
import { UPSTREAM_AUTHORIZATION_HEADER } from '../identity/stamp.ts';
import { FIRST_MODERN_REVISION } from '../mcp-headers.ts';
import { hasUpstreamCredential, upstreamProviderOf } from './upstream-credential.ts';

/**
 * The revisions before 2026-07-28 `/mcp` serves (docs/gateway.md, "Revisions and features on
 * `/mcp`"); 2026-07-28 and later are the SDK v2 handler's to accept or refuse (-32022).
 */
const SESSION_REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

/**
 * An `MCP-Protocol-Version` header naming a revision before 2026-07-28 that `/mcp` does not serve:
 * refused here with the revisions it does serve (the SDK v1 transport's own refusal listed its
 * list, without 2026-07-28).
 */
function unsupportedRevision(req: IncomingMessage): string | undefined {
  const given = req.headers['mcp-protocol-version'];
  if (typeof given !== 'string') return undefined;
  const revision = given.trim();
  if (revision >= FIRST_MODERN_REVISION || SESSION_REVISIONS.includes(revision)) return undefined;
  return revision.slice(0, 40);
}

/** Answers a request `/mcp` refuses on its HTTP method or credential headers; false when it takes it. */
export function refusedHttp(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE') {
    sendGatewayError(
      res,
      new GatewayError(
        'sdk_method_not_allowed',
        `Method not allowed: /mcp takes POST (and GET, DELETE); ${String(req.method).slice(0, 20)} is not one of them.`,
      ),
      { allow: 'GET, POST, DELETE' },
    );
    return true;
  }
  if (req.method === 'GET') {
    // A GET stream carries a 2025 session's server-initiated messages (a GET in a session is
    // served before this, see notification-stream); without a session there is none to carry
    // (spec: 405). List changes reach 2026-07-28 clients through subscriptions/listen.
    sendGatewayError(
      res,
      new GatewayError(
        'sdk_method_not_allowed',
        'Method not allowed: a GET on /mcp opens the notification stream of a 2025 session; send the Mcp-Session-Id its initialize answered (2026-07-28 clients: subscriptions/listen).',
      ),
      { allow: 'POST, DELETE' },
    );
    return true;
  }
  const revision = unsupportedRevision(req);
  if (revision !== undefined) {
    sendGatewayError(
      res,
      new GatewayError(
        'unsupported_protocol_version',
        `Unsupported protocol version: ${JSON.stringify(revision)}; /mcp speaks 2026-07-28, ${SESSION_REVISIONS.join(', ')}.`,
      ),
    );
    return true;
  }
  if (
    req.method === 'POST' &&
    hasUpstreamCredential(req) &&
    (req.headersDistinct[UPSTREAM_AUTHORIZATION_HEADER]?.length ?? 0) > 1
  ) {
    // Node joins two header lines into one value: both would go to the provider.
    sendGatewayError(
      res,
      new GatewayError(
        'invalid_request',
        'Send X-PLATFORM-Upstream-Authorization once: it is one credential, for one provider.',
      ),
    );
    return true;
  }
  if (req.method === 'POST' && hasUpstreamCredential(req) && upstreamProviderOf(req) === undefined) {
    // One credential, many providers: sent to every one, any anonymous listing could collect it.
    sendGatewayError(
      res,
      new GatewayError(
        'invalid_request',
        `On /mcp a third-party credential goes to one provider only: name it with X-PLATFORM-Upstream-Provider: <provider> (a provider slug), or call /mcp/p/<provider>.`,
      ),
    );
    return true;
  }
  return false;
}
