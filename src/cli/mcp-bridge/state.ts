/**
 * What one bridge session keeps while it runs, shared by its parts (replies to the client, the
 * gateway session, the client's input, the ending): one plain object, so each part reads the
 * latest value another part set (the transport a renewal replaced, the version a handshake agreed).
 */
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The bridge's transport to the gateway. */
export type Upstream = StreamableHTTPClientTransport;

/** A batch of the client's whose answers are gathered to go back as one array. */
export interface BatchReply {
  ids: Array<string | number>;
  /** How many of its requests are not answered yet. */
  waiting: number;
  answers: unknown[];
}

/** A client's initialize the gateway has not answered yet: `over` once it has (or it failed). */
export interface Handshake {
  id: string | number;
  answered: Promise<void>;
  over: () => void;
}

/** The state of one bridge session. */
export interface BridgeState {
  /** The gateway session's transport (replaced when a new session is opened). */
  upstream: Upstream;
  /** Set once the bridge is ending. */
  closing: boolean;
  /** Stops reading stdin (set once reading starts). */
  stopReading: () => void;
  /**
   * The client's requests not answered yet: requests sent before stdin ended still get their
   * answers (e.g. `… | plaza mcp connect x`), for at most PLAZA_MCP_CONNECT_DRAIN_MS (10 s).
   */
  unanswered: Set<string | number>;
  /** Called once `unanswered` empties, while the bridge waits for it to. */
  settled: (() => void) | undefined;
  /** Answers the gateway sent, not yet written to the client. */
  arrived: Set<string | number>;
  /**
   * The client's initialize while the gateway has not answered it: the session id comes with that
   * answer, so what the client sends meanwhile (its initialized notification, a first tools/list
   * pipelined behind) waits for it, then goes in the order it came. Sent at once, it reached the
   * gateway without a session id and was refused (the notification silently).
   */
  handshake: Handshake | undefined;
  /** The protocol version the gateway answered the client's initialize with. */
  negotiated: string | undefined;
  /** The client's batches (protocol 2025-03-26) still waiting for answers, by the ids of their requests. */
  batches: Map<string | number, BatchReply>;
  /** The client's initialize and initialized messages, to open a new gateway session with. */
  initialize: JSONRPCMessage | undefined;
  initialized: JSONRPCMessage | undefined;
  /** Settles once the start-up check of the provider has said what it found (see providerWarning). */
  providerChecked: Promise<void>;
}

/** A new session's state, on its first transport. */
export function createBridgeState(upstream: Upstream): BridgeState {
  return {
    upstream,
    closing: false,
    stopReading: () => {},
    unanswered: new Set(),
    settled: undefined,
    arrived: new Set(),
    handshake: undefined,
    negotiated: undefined,
    batches: new Map(),
    initialize: undefined,
    initialized: undefined,
    providerChecked: Promise.resolve(),
  };
}
