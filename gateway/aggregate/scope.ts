/** What every `/mcp` method handler is given about its request, whichever SDK serves it. */
import type { IncomingMessage } from 'node:http';

import type { AgentIdentity } from '../identity/agin-card.ts';
import type { NotifyAgent } from './relay.ts';

/** One request to `/mcp`, as its handler sees it. */
export interface RequestScope {
  identity: AgentIdentity;
  req: IncomingMessage;
  /** Aborted when the caller cancels (CallCancelled) or leaves. */
  signal: AbortSignal;
  /** Progress and log messages on the request's stream. */
  notify: NotifyAgent;
  /** The capabilities a 2026-07-28 request declared (absent for 2025 requests). */
  clientCapabilities?: Record<string, unknown> | undefined;
  /** The least severe log message the agent wants relayed (a 2026-07-28 request's `logLevel`). */
  logLevel?: string | undefined;
  /** A 2026-07-28 request made again with the inputs asked for: the responses and the (sealed) state. */
  inputRound?: { inputResponses?: Record<string, unknown> | undefined; requestState?: string | undefined } | undefined;
}

/** A JSON-RPC error a handler throws: the SDKs answer with its code, message and data. */
export function rpcFailure(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}

/** JSON-RPC -32602, MCP's code for an unknown resource (with `data.uri`), prompt or reference. */
export const INVALID_PARAMS = -32602;
