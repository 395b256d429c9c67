/**
 * List changes for `/mcp`'s streams — 2026-07-28 `subscriptions/listen` and a 2025 session's GET
 * stream (notification-stream.ts): while at least one is open on this instance, what `/mcp` shows
 * is fingerprinted every `everyMs` and a change is published to the streams — the tool list (from
 * the catalog), and the set of online connectors that declare resources, and prompts (their
 * gathered lists change with it). A provider's own changes to its resources or prompts are not
 * seen here. Each instance watches its own catalog (the database), so a change reaches listeners
 * on every instance without a shared bus; nothing is read while nobody listens.
 */
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';

/** The lists a watch fingerprints, each with the event its change publishes. */
const WATCHED = {
  tools: 'tools_list_changed',
  resources: 'resources_list_changed',
  prompts: 'prompts_list_changed',
} as const;

/** What the watch reads: a fingerprint of each list, different whenever the list is. */
export interface ListWatch {
  everyMs: number;
  fingerprints: () => Promise<Record<keyof typeof WATCHED, string>>;
}

/** An in-process bus: what is published reaches this instance's listeners (one throwing stops no other). */
export function localBus(): ServerEventBus {
  const listeners = new Set<(event: ServerEvent) => void>();
  return {
    publish(event) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch {
          // A stream that cannot take the event ends itself; the others still get it.
        }
      }
    },
    subscribe(listener) {
      const own = (event: ServerEvent) => listener(event);
      listeners.add(own);
      return () => void listeners.delete(own);
    },
  };
}

/** `inner` with its subscribers counted: the watch runs while there is one. */
export function watchedBus(inner: ServerEventBus, watch: ListWatch): ServerEventBus {
  let listeners = 0;
  let timer: NodeJS.Timeout | undefined;
  let last: Record<keyof typeof WATCHED, string> | undefined;
  let reading = false;

  const tick = async () => {
    if (reading) return;
    reading = true;
    try {
      const now = await watch.fingerprints();
      if (last !== undefined)
        for (const list of Object.keys(WATCHED) as (keyof typeof WATCHED)[])
          if (now[list] !== last[list]) inner.publish({ kind: WATCHED[list] });
      last = now;
    } catch {
      // The catalog could not be read (the database is away): try again on the next tick.
    } finally {
      reading = false;
    }
  };
  const start = () => {
    last = undefined;
    tick().catch(() => undefined);
    timer = setInterval(() => {
      tick().catch(() => undefined);
    }, watch.everyMs);
    timer.unref();
  };
  const stop = () => {
    clearInterval(timer);
    timer = undefined;
  };

  return {
    publish: (event: ServerEvent) => inner.publish(event),
    subscribe(listener) {
      const unsubscribe = inner.subscribe(listener);
      if (listeners++ === 0) start();
      let done = false;
      return () => {
        if (done) return;
        done = true;
        unsubscribe();
        if (--listeners === 0) stop();
      };
    },
  };
}
