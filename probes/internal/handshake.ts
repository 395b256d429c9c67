import { InitializeResultSchema, McpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { nestsDeeperThan, storableJson, storableText } from '../../src/kernel/index.ts';
import { PROBE_PROTOCOL_VERSION, ProbeProtocolError, type ProbeSession } from './streamable-http.ts';

/** The stateless revision the probe speaks (no initialize, per-request `_meta`, `server/discover`). */
export const STATELESS_PROTOCOL_VERSION = '2026-07-28';

/** Who the probe says it is, in `initialize` and in a stateless request's `_meta`. */
const CLIENT_INFO = { name: 'plaza-prober', version: '1.0.0' };

/**
 * The `_meta` every 2026-07-28 request carries, with the keys the MCP SDK v2 client sends: the
 * probe declares no client capability (it answers no sampling, elicitation or roots).
 */
const STATELESS_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': STATELESS_PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** What a server said of itself in server/discover or initialize. */
export interface Handshake {
  /** The revision the probe speaks with it from now on. */
  protocolVersion: string;
  /** Every revision the answer offered (server/discover lists them; initialize names one). */
  revisions: string[];
  serverInfo: Record<string, unknown> | null;
  capabilities: Record<string, unknown> | null;
}

const REVISION = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const ServerInfoSchema = z.looseObject({ name: z.string(), version: z.string(), title: z.string().optional() });

// Loose: a server may add fields; only what the catalog keeps is read.
const DiscoverResultSchema = z.looseObject({
  supportedVersions: z.array(z.string()).min(1),
  capabilities: z.looseObject({}),
  serverInfo: ServerInfoSchema.optional(),
  _meta: z.looseObject({ 'io.modelcontextprotocol/serverInfo': ServerInfoSchema.optional() }).optional(),
});

/** Revisions listed at most: a server's list is its own, the catalog's row is ours. */
const MAX_REVISIONS = 10;
/** Capabilities kept whole up to this JSON size and depth; past it, their names only. */
const MAX_CAPABILITIES_CHARS = 8_000;
const MAX_CAPABILITIES_DEPTH = 16;

/**
 * Asks `server/discover` in revision 2026-07-28, and from then on speaks it on `session`.
 * Throws when the answer is not one: the caller falls back to initialize when `fallsBack` says so.
 */
export async function discover(session: ProbeSession): Promise<Handshake> {
  session.useStateless(STATELESS_PROTOCOL_VERSION, STATELESS_ENVELOPE);
  const result = await session.request('server/discover', {}, DiscoverResultSchema);
  const offered = result.supportedVersions.filter((v) => REVISION.safeParse(v).success);
  if (!offered.includes(STATELESS_PROTOCOL_VERSION)) {
    throw new ProbeProtocolError(
      `server/discover offers no revision the probe speaks (${offered.slice(0, 3).join(', ').slice(0, 60) || 'none'}).`,
    );
  }
  const info = result._meta?.['io.modelcontextprotocol/serverInfo'] ?? result.serverInfo;
  return {
    protocolVersion: STATELESS_PROTOCOL_VERSION,
    revisions: newestFirst(offered),
    serverInfo: info ? keptServerInfo(info) : null,
    capabilities: keptCapabilities(result.capabilities),
  };
}

/** The initialize handshake of the revisions before 2026-07-28 (version negotiated as the SDK's client does). */
export async function initialize(session: ProbeSession): Promise<Handshake> {
  const init = await session.request(
    'initialize',
    { protocolVersion: PROBE_PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
    InitializeResultSchema,
  );
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(init.protocolVersion))
    throw new ProbeProtocolError(`Server's protocol version is not supported: ${init.protocolVersion.slice(0, 40)}`);
  session.setProtocolVersion(init.protocolVersion);
  return {
    protocolVersion: init.protocolVersion,
    revisions: [init.protocolVersion],
    serverInfo: keptServerInfo(init.serverInfo),
    capabilities: keptCapabilities(init.capabilities),
  };
}

/**
 * Whether a failed server/discover (or the initialize after it) says only "not this revision": an
 * answer the probe could not use, a JSON-RPC error (-32601 of a server before 2026-07-28, -32022,
 * any other), an HTTP error status. Not: a 401 asking for a Bearer token (the endpoint needs a
 * caller's credential whatever the revision), a redirect (the gateway follows none), or no answer
 * at all (refused by the SSRF guard or the host's budget, unreachable, timed out).
 */
export function fallsBack(error: unknown): boolean {
  if (error instanceof McpError) return true;
  if (!(error instanceof ProbeProtocolError)) return false;
  if (error.bearerChallenge) return false;
  return error.status === undefined || error.status < 300 || error.status > 399;
}

/** Revisions newest first (they are ISO dates), each once. */
export function newestFirst(revisions: Iterable<string>): string[] {
  return [...new Set(revisions)].sort().reverse().slice(0, MAX_REVISIONS);
}

function keptServerInfo(info: z.infer<typeof ServerInfoSchema>): Record<string, unknown> {
  return storableJson({
    name: info.name.slice(0, 200),
    version: info.version.slice(0, 100),
    ...(info.title ? { title: info.title.slice(0, 200) } : {}),
  }) as Record<string, unknown>;
}

/**
 * A server's capabilities as the catalog keeps them: whole when small and shallow (they are
 * usually a few flags), else their names only, so one server's `experimental` cannot bloat the row.
 */
function keptCapabilities(capabilities: Record<string, unknown>): Record<string, unknown> {
  const whole = nestsDeeperThan(capabilities, MAX_CAPABILITIES_DEPTH)
    ? undefined
    : (storableJson(capabilities) as Record<string, unknown>);
  if (whole !== undefined && JSON.stringify(whole).length <= MAX_CAPABILITIES_CHARS) return whole;
  return Object.fromEntries(
    Object.keys(capabilities)
      .slice(0, 50)
      .map((name) => [storableText(name.slice(0, 100)), {}]),
  );
}
