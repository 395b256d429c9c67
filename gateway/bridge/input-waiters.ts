/**
 * Where a bridged call waits for its client's answers to the requests Plaza sent it on the call's
 * stream (see input-rounds). The answer is a POST of its own and may reach any instance: there it
 * is handed to the waiter here, or passed on (SharedCalls, Redis in Plaza) to the instance that
 * holds the call's stream. Waiters are keyed by provider, agent and request id, so no other agent
 * can answer for one.
 */
import { randomUUID } from 'node:crypto';

import type { SharedCalls } from '../shared-calls.ts';

/** The most waiters an instance holds at once (each is a request a client has not answered yet). */
const MAX_WAITERS = 10_000;

/** The waiter key of request `id` Plaza sent `agentId`'s client on `provider`. */
export function waiterKey(provider: string, agentId: string, id: unknown): string {
  return JSON.stringify(['bridge-input', provider, agentId, id]);
}

/** Waiters for clients' answers (see the file's comment). */
export function createInputWaiters(shared: SharedCalls | undefined) {
  const local = new Map<string, (message: unknown) => void>();
  return {
    /**
     * The client's answer (a JSON-RPC response) under `key`, or undefined once `timeoutMs` passed
     * or `signal` aborted (the call's client left).
     */
    wait(key: string, timeoutMs: number, signal: AbortSignal): Promise<unknown> {
      if (local.size >= MAX_WAITERS || signal.aborted) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const done = (message: unknown) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', gone);
          if (local.get(key) === done) local.delete(key);
          unshare?.();
          resolve(message);
        };
        const gone = () => done(undefined);
        const timer = setTimeout(gone, timeoutMs);
        signal.addEventListener('abort', gone, { once: true });
        local.set(key, done);
        const unshare = shared?.listen?.(key, (payload) => {
          try {
            done(JSON.parse(payload) as unknown);
          } catch {
            done(undefined);
          }
        });
      });
    },
    /** Hands a client's answer to its waiter, here or on the instance holding it. */
    answer(key: string, message: unknown): void {
      const waiter = local.get(key);
      if (waiter) waiter(message);
      else shared?.deliver?.(key, JSON.stringify(message));
    },
  };
}

/** The waiters of one instance. */
export type InputWaiters = ReturnType<typeof createInputWaiters>;

/** A request Plaza sends a client on a call's event stream. */
export interface ClientRequest {
  jsonrpc: '2.0';
  id: string;
  method: string;
  params?: unknown;
}

/**
 * Asks a client `method` with a request of a fresh id, written by `asking.write` (false: it could
 * not be), and waits for its answer under `asking.key(id)` (any instance may receive it): the
 * answer, or undefined when none came within `asking.timeoutMs` or `asking.signal` aborted.
 */
export async function askClient(
  waiters: InputWaiters,
  asking: {
    key: (id: string) => string;
    timeoutMs: number;
    signal: AbortSignal;
    write: (message: ClientRequest) => boolean;
  },
  method: string,
  params: unknown,
): Promise<unknown> {
  const id = `plaza-input-${randomUUID()}`;
  const unasked = new AbortController();
  // Waiting before asking: the answer may come back at once, to another instance.
  const answered = waiters.wait(asking.key(id), asking.timeoutMs, AbortSignal.any([asking.signal, unasked.signal]));
  if (!asking.write({ jsonrpc: '2.0', id, method, params })) {
    unasked.abort();
    return undefined;
  }
  return answered;
}
