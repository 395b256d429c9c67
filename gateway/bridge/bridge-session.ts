/**
 * The session Plaza holds with a 2025 client of a provider that speaks only 2026-07-28: there is no
 * upstream session, so what every request needs of the client's `initialize` (the revision agreed,
 * its clientInfo and capabilities, which go in each stateless request's envelope) is what the
 * sealed session id carries. Any instance holding the sealing key continues the session.
 */
import { DEFAULT_SESSION_REVISION, speaksSessionRevision } from '../upstream/revisions.ts';

/** Marks a sealed session's upstream part as a bridge session (no upstream id starts so: see isBridgeSession). */
const PREFIX = 'plaza-bridge1.';
/** The most of the client's capabilities carried whole; past it, their names only (the id goes in a header). */
const MAX_CAPABILITIES_CHARS = 1_500;

/** What a 2025 client said in its initialize, as its bridged requests need it. */
export interface BridgeSession {
  /** The revision agreed with the client. */
  protocolVersion: string;
  clientInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
}

/** What a 2025 client's `initialize` params say, as a session (its revision, when one Plaza speaks, else the default). */
export function bridgeSessionOf(params: Record<string, unknown> | undefined): BridgeSession {
  const asked = typeof params?.['protocolVersion'] === 'string' ? params['protocolVersion'] : '';
  const info = params?.['clientInfo'] as { name?: unknown; version?: unknown } | undefined;
  const capabilities = params?.['capabilities'];
  return {
    protocolVersion: speaksSessionRevision(asked) ? asked : DEFAULT_SESSION_REVISION,
    clientInfo: { name: String(info?.name ?? 'unknown'), version: String(info?.version ?? '0') },
    capabilities:
      typeof capabilities === 'object' && capabilities !== null && !Array.isArray(capabilities)
        ? (capabilities as Record<string, unknown>)
        : {},
  };
}

/** Whether a sealed session's upstream part is a bridge session. */
export function isBridgeSession(upstreamSession: string | undefined): upstreamSession is string {
  return upstreamSession !== undefined && upstreamSession.startsWith(PREFIX);
}

/** The upstream part of a sealed bridge session id. */
export function bridgeSessionId(session: BridgeSession): string {
  let capabilities = JSON.stringify(session.capabilities);
  if (capabilities.length > MAX_CAPABILITIES_CHARS)
    capabilities = JSON.stringify(
      Object.fromEntries(
        Object.keys(session.capabilities)
          .slice(0, 20)
          .map((k) => [k, {}]),
      ),
    );
  const info = { name: session.clientInfo.name.slice(0, 100), version: session.clientInfo.version.slice(0, 50) };
  const body = JSON.stringify([session.protocolVersion, info, JSON.parse(capabilities)]);
  return PREFIX + Buffer.from(body, 'utf8').toString('base64url');
}

/** The bridge session a sealed id's upstream part names (it was sealed by Plaza, so it is well-formed). */
export function openBridgeSession(upstreamSession: string): BridgeSession {
  try {
    const [protocolVersion, clientInfo, capabilities] = JSON.parse(
      Buffer.from(upstreamSession.slice(PREFIX.length), 'base64url').toString('utf8'),
    ) as [string, BridgeSession['clientInfo'], Record<string, unknown>];
    return { protocolVersion, clientInfo, capabilities };
  } catch {
    return { protocolVersion: '2025-11-25', clientInfo: { name: 'unknown', version: '0' }, capabilities: {} };
  }
}
