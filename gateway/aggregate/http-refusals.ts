/** The requests `/mcp` refuses on their HTTP method or credential headers, before reading a body. */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { GatewayError, sendGatewayError } from '../error-table.ts';
import { UPSTREAM_AUTHORIZATION_HEADER } from '../identity/stamp.ts';
import { hasUpstreamCredential, upstreamProviderOf } from './upstream-credential.ts';

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
