/**
 * Cancellation on `/mcp`. A 2025 client cancels with notifications/cancelled, a POST of its own
 * that may reach another instance than its call (passed on through SharedCalls, Redis in Plaza);
 * a 2026-07-28 client closes its request. Either way the call's signal is aborted with a
 * CallCancelled reason, the pool tells the upstream (notifications/cancelled in its session), and
 * the receipt says `cancelled`. A 2025 client that merely disconnects has not cancelled (spec):
 * that call's receipt records the failure as before.
 */
import type { SharedCalls } from '../shared-calls.ts';

/** The reason a call's signal is aborted with when its caller cancelled it. */
export class CallCancelled extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CallCancelled';
  }
}

/** The caller's words when `signal` was aborted by a cancellation, else undefined. */
export function cancelledBy(signal: AbortSignal): string | undefined {
  return signal.aborted && signal.reason instanceof CallCancelled ? signal.reason.message : undefined;
}

/** The key a call is known under for cancellation: the agent and its JSON-RPC request id. */
function keyOf(agentId: string, requestId: string | number): string {
  return `aggregate\n${agentId}\n${typeof requestId}:${String(requestId)}`;
}

/** The calls in flight on this instance that a 2025 client may cancel, and cancellations passed between instances. */
export function createCancellations(shared: SharedCalls | undefined) {
  const calls = new Map<string, Set<AbortController>>();
  return {
    /** Keeps `controller` cancellable under the agent's request id until the returned release is called. */
    track(agentId: string, requestId: string | number, controller: AbortController): () => void {
      const key = keyOf(agentId, requestId);
      let set = calls.get(key);
      if (!set) calls.set(key, (set = new Set()));
      set.add(controller);
      const unshare = shared?.add(key, () => controller.abort(new CallCancelled('cancelled by the caller')));
      return () => {
        set.delete(controller);
        if (set.size === 0 && calls.get(key) === set) calls.delete(key);
        unshare?.();
      };
    },
    /** Cancels the agent's request `requestId`: here when it runs here, else on the instance that runs it. */
    cancel(agentId: string, requestId: string | number, reason: string | undefined): void {
      const key = keyOf(agentId, requestId);
      const set = calls.get(key);
      const words = `cancelled by the caller${reason ? ` (${reason.slice(0, 200)})` : ''}`;
      if (set) for (const controller of set) controller.abort(new CallCancelled(words));
      else shared?.cancel(key);
    },
  };
}

export type Cancellations = ReturnType<typeof createCancellations>;

/** The request id and reason of a notifications/cancelled body, else undefined. */
export function cancellationOf(body: unknown): { requestId: string | number; reason?: string } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as { method?: unknown; id?: unknown; params?: { requestId?: unknown; reason?: unknown } };
  if (message.method !== 'notifications/cancelled' || message.id !== undefined) return undefined;
  const requestId = message.params?.requestId;
  if (typeof requestId !== 'string' && typeof requestId !== 'number') return undefined;
  const reason = message.params?.reason;
  return { requestId, ...(typeof reason === 'string' ? { reason } : {}) };
}
