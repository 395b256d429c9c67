/**
 * Which MCP revision the pool speaks to an upstream, from the revisions its endpoint offers (the
 * probe records them: McpEndpoint.protocol_versions, newest first).
 */
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

/** The stateless revision Plaza speaks: no initialize, no session, the client's envelope in every request's `_meta`. */
export const STATELESS_REVISION = '2026-07-28';

/** The revisions with sessions Plaza speaks (the SDK v1 client's list), and the one it asks for unless told. */
const SESSION_REVISIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
export const DEFAULT_SESSION_REVISION = LATEST_PROTOCOL_VERSION;

/** How one upstream is spoken to. */
export type UpstreamMode =
  /** Stateless requests in `revision`. */
  | { stateless: true; revision: string }
  /**
   * A pooled session opened with `initialize` asking for `revision`. `recorded`: the upstream's
   * revisions are known; when not, a refusal of initialize as an unsupported version sends the
   * calls stateless instead.
   */
  | { stateless: false; revision: string; recorded: boolean };

const UNRECORDED: UpstreamMode = { stateless: false, revision: DEFAULT_SESSION_REVISION, recorded: false };
/** Modes by the connector's (cached, so reused) list of revisions: the pool asks once per call. */
const modes = new WeakMap<readonly string[], UpstreamMode>();

/** How to speak to an upstream offering `offered` (none recorded: as before 2026-07-28, falling back). */
export function upstreamMode(offered: readonly string[] | undefined): UpstreamMode {
  if (offered === undefined || offered.length === 0) return UNRECORDED;
  const known = modes.get(offered);
  if (known) return known;
  let mode: UpstreamMode;
  if (offered.includes(STATELESS_REVISION)) mode = { stateless: true, revision: STATELESS_REVISION };
  else {
    // The newest revision both speak; an upstream offering none Plaza knows is asked for Plaza's newest (it may answer another).
    const shared = SESSION_REVISIONS.find((r) => offered.includes(r));
    mode = { stateless: false, revision: shared ?? DEFAULT_SESSION_REVISION, recorded: shared !== undefined };
  }
  modes.set(offered, mode);
  return mode;
}

/** Whether `revision` is one Plaza speaks with sessions (it may take an upstream's initialize answer naming it). */
export function speaksSessionRevision(revision: string): boolean {
  return SESSION_REVISIONS.includes(revision);
}
