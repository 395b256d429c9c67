/**
 * The revision bridge of `/mcp/p/<provider>`: a client and a provider that share no MCP revision
 * (a 2025 client and a 2026-only provider, or the reverse) still reach each other, Plaza speaking
 * each one's revision (see detect, legacy-client, modern-client). What crosses and what does not
 * is in docs/gateway.md, "Revisions".
 */

import type { CallPipeline } from '../call-pipeline.ts';
import type { createCallsInFlight } from '../internal/calls-in-flight.ts';
import type { SessionSealer } from '../session-sealer.ts';
import type { SharedCalls } from '../shared-calls.ts';
import type { UpstreamHttp, UpstreamHttpResponse } from '../upstream-http.ts';
import { createUpstreamPool, type UpstreamPool } from '../upstream-pool.ts';
import { type BridgeDirection, bridgeDirection } from './detect.ts';
import type { BridgedExchange } from './exchange.ts';
import { createInputWaiters } from './input-waiters.ts';
import { serveLegacyClient } from './legacy-client.ts';
import { serveModernClient } from './modern-client.ts';

export { type BridgeDirection, bridgeDirection } from './detect.ts';
export type { BridgedExchange } from './exchange.ts';

/** Options of createRevisionBridge (the passthrough's own dependencies, mostly). */
export interface RevisionBridgeOptions {
  pipeline: CallPipeline;
  sealer: SessionSealer;
  http: UpstreamHttp;
  timeoutMs: number;
  maxRequest: number;
  maxResponse: number;
  onCall: ((endpointId: string) => void) | undefined;
  /** The passthrough's open notification streams (ended when the server stops). */
  streams: Set<UpstreamHttpResponse>;
  /** Whether the server is stopping (no new notification stream then). */
  stopping: () => boolean;
  /** The passthrough's calls in flight (a 2025 client's notifications/cancelled finds its bridged request there). */
  inFlight: ReturnType<typeof createCallsInFlight>;
  /** Where a client's answer that reached another instance is passed on (Redis in Plaza). */
  shared?: SharedCalls | undefined;
  /** The pool bridged requests go through; default one of its own on `http`. */
  pool?: UpstreamPool;
}

/** Builds the bridge; its pool is made on first use. */
export function createRevisionBridge(options: RevisionBridgeOptions) {
  let pool = options.pool;
  const waiters = createInputWaiters(options.shared);
  const deps = () => {
    pool ??= createUpstreamPool({
      http: options.http,
      timeoutMs: options.timeoutMs,
      maxResponseBytes: options.maxResponse,
    });
    return {
      pipeline: options.pipeline,
      pool,
      onCall: options.onCall,
      sealer: options.sealer,
      maxRequest: options.maxRequest,
      listen: {
        http: options.http,
        timeoutMs: options.timeoutMs,
        maxEvent: options.maxResponse,
        streams: options.streams,
      },
      stopping: options.stopping,
      waiters,
      timeoutMs: options.timeoutMs,
      inFlight: options.inFlight,
    };
  };
  return {
    /** Which way a request crosses revisions, if it does (from its headers: see detect). */
    direction: bridgeDirection,
    /** Answers a request that crosses revisions. */
    serve(direction: BridgeDirection, ex: BridgedExchange): Promise<void> {
      return direction === 'legacy-client' ? serveLegacyClient(deps(), ex) : serveModernClient(deps(), ex);
    },
  };
}

/** The passthrough's revision bridge. */
export type RevisionBridge = ReturnType<typeof createRevisionBridge>;
