import type { SharedCalls } from '../shared-calls.ts';

/** A call in flight that a notifications/cancelled can end: its JSON-RPC id upstream, and how to end it. */
export interface CallInFlight {
  upstreamId: string;
  /** The caller's own notifications/cancelled for it is on its way upstream: no notice of the gateway's. */
  cancelSent(): void;
  cancel(): void;
}

/** Where a call in flight is found by a notifications/cancelled naming the caller's request id. */
export function callKey(provider: string, agentId: string, upstreamSession: string, requestId: unknown): string {
  return JSON.stringify([provider, agentId, upstreamSession, requestId]);
}

/**
 * Where a call in flight is found by the resume of its stream: by its own call id, which a call's
 * event ids carry (bound to its agent, connector and session), so two calls under one caller's id
 * — clients of one agent without sessions, each counting from 1 — are never taken for each other.
 */
export function callIdKey(callId: string): string {
  return JSON.stringify(['call', callId]);
}

/**
 * The calls this instance relays, by connector, agent, upstream session and the caller's id (see
 * callKey): a notifications/cancelled finds its call here (the upstream knows the call by its
 * call id), or is passed on to the other instances through `shared`.
 */
export function createCallsInFlight(shared: SharedCalls | undefined) {
  const calls = new Map<string, { call: CallInFlight; end: () => void }>();
  return {
    /** The call under `key` when this instance relays it; otherwise the cancellation is passed on. */
    cancelling(key: string): CallInFlight | undefined {
      const found = calls.get(key);
      if (!found) shared?.cancel(key);
      return found?.call;
    },
    /**
     * Ends the call under `key` wherever it runs, as a cancellation the upstream has not heard of
     * (it is told): here when this instance relays it, else on the instance that does.
     */
    end(key: string): void {
      const found = calls.get(key);
      if (found) found.end();
      else shared?.cancel(key);
    },
    /**
     * Keeps `call` under `key` until the returned release is called; `fromElsewhere` runs for a
     * cancellation that reached another instance (it tells the upstream, then ends the call).
     */
    add(key: string, call: CallInFlight, fromElsewhere: () => void): () => void {
      calls.set(key, { call, end: fromElsewhere });
      const unshare = shared?.add(key, fromElsewhere);
      return () => {
        if (calls.get(key)?.call === call) calls.delete(key);
        unshare?.();
      };
    },
  };
}
