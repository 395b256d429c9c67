/**
 * Whether a passthrough request crosses revisions, from its headers alone (the body is read only
 * once a bridge takes the request, so a request that is relayed as before costs nothing more).
 */
import type { IncomingMessage } from 'node:http';

import type { Connector } from '../passthrough/exchange.ts';
import { speaksSessionRevision, STATELESS_REVISION } from '../upstream/revisions.ts';
import { isBridgeSession } from './bridge-session.ts';

/**
 * `legacy-client`: a client of a revision before 2026-07-28 to a provider that speaks only
 * 2026-07-28 (or a session Plaza opened for one). `modern-client`: a 2026-07-28 client to a provider
 * that speaks only earlier revisions. Undefined: the two speak a revision in common (or the
 * provider's revisions are not recorded), and the request is relayed as it is.
 */
export type BridgeDirection = 'legacy-client' | 'modern-client';

/** Which way `req` crosses revisions, if it does. */
export function bridgeDirection(
  req: IncomingMessage,
  connector: Connector,
  upstreamSession: string | undefined,
): BridgeDirection | undefined {
  if (isBridgeSession(upstreamSession)) return 'legacy-client';
  const offered = connector.protocolVersions;
  if (offered === undefined || offered.length === 0) return undefined;
  const header = req.headers['mcp-protocol-version'];
  const modernClient = header === STATELESS_REVISION;
  const upstreamModern = offered.includes(STATELESS_REVISION);
  if (modernClient) return upstreamModern ? undefined : 'modern-client';
  // A client before 2026-07-28 (no header at initialize, or its session's revision).
  if (upstreamModern && !offered.some(speaksSessionRevision)) return 'legacy-client';
  return undefined;
}
