/**
 * Call counters of quotas: fixed windows, one key per scope and window, checked and counted
 * together. In Redis one Lua script checks every limit and, only if none is reached, increments
 * every key (one round trip, atomic across instances); in memory the same in this process.
 */
import type { Redis } from 'ioredis';

import type { Logger } from '../log/index.ts';

/** One counter a call counts in: its key, its limit (0: counted, not limited) and when its window ends. */
export interface CounterSlot {
  key: string;
  limit: number;
  /** Ms since the epoch: the window's end (the key may go some time after). */
  resetAt: number;
}

/** Counts calls in windows. */
export interface QuotaCounters {
  /** Where counts are kept. */
  readonly shared: boolean;
  /**
   * Counts one call in every slot, unless a slot's limit is reached: then counts nothing and returns
   * that slot's index (the first such). -1 when counted.
   */
  consume(slots: readonly CounterSlot[], now: number): Promise<number>;
  /** The current counts of `keys` (0 for a window not started). */
  read(keys: readonly string[], now: number): Promise<number[]>;
  close(): Promise<void>;
}

/** Keys live this long past their window's end, so usage reads them until it resets. */
const LINGER_MS = 5_000;

// KEYS: the slots' keys. ARGV: their limits (0: none), then their expiry times (ms).
const SCRIPT = `
local n = #KEYS
for i = 1, n do
  local limit = tonumber(ARGV[i])
  if limit > 0 and tonumber(redis.call('GET', KEYS[i]) or '0') >= limit then return i end
end
for i = 1, n do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIREAT', KEYS[i], ARGV[n + i]) end
end
return 0
`;

/** Counters in this process only. */
export function createMemoryCounters(): QuotaCounters {
  const windows = new Map<string, { value: number; expiresAt: number }>();
  let sweepAt = 0;
  const current = (key: string, now: number) => {
    const w = windows.get(key);
    return w !== undefined && w.expiresAt > now ? w : undefined;
  };
  return {
    shared: false,
    async consume(slots, now) {
      if (now >= sweepAt) {
        sweepAt = now + 60_000;
        for (const [key, w] of windows) if (w.expiresAt <= now) windows.delete(key);
      }
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i]!;
        if (slot.limit > 0 && (current(slot.key, now)?.value ?? 0) >= slot.limit) return i;
      }
      for (const slot of slots) {
        const w = current(slot.key, now);
        if (w) w.value++;
        else windows.set(slot.key, { value: 1, expiresAt: slot.resetAt + LINGER_MS });
      }
      return -1;
    },
    async read(keys, now) {
      return keys.map((key) => current(key, now)?.value ?? 0);
    },
    async close() {},
  };
}

/**
 * Counters shared through Redis; while Redis fails, counted in this process instead (a warning once
 * per outage), so limits still hold per instance and calls still go.
 */
export function createRedisCounters(redis: Redis, log: Logger): QuotaCounters {
  const local = createMemoryCounters();
  let sha: string | undefined;
  let degraded = false;
  // The first calls after start-up wait (at most 1 s) for the connection, as the website limits
  // do, instead of counting locally and logging an outage that is none.
  let connecting: Promise<void> | undefined =
    redis.status === 'ready'
      ? undefined
      : new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            for (const event of ['ready', 'error', 'end']) redis.off(event, done);
            connecting = undefined;
            resolve();
          };
          const timer = setTimeout(done, 1_000);
          timer.unref();
          for (const event of ['ready', 'error', 'end']) redis.once(event, done);
        });
  const run = async (keys: string[], args: (string | number)[]): Promise<number> => {
    if (sha !== undefined) {
      try {
        return Number(await redis.evalsha(sha, keys.length, ...keys, ...args));
      } catch (error) {
        if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
      }
    }
    sha = String(await redis.script('LOAD', SCRIPT));
    return Number(await redis.evalsha(sha, keys.length, ...keys, ...args));
  };
  const fellBack = (error: unknown) => {
    if (!degraded) {
      degraded = true;
      log.warn({ err: error }, 'Redis unavailable: agent quotas fall back to per-instance counts');
    }
  };
  const recovered = () => {
    if (degraded) {
      degraded = false;
      log.info('Redis is back: agent quotas are shared again');
    }
  };
  return {
    shared: true,
    async consume(slots, now) {
      if (connecting) await connecting;
      try {
        const at = await run(
          slots.map((s) => s.key),
          [...slots.map((s) => s.limit), ...slots.map((s) => s.resetAt + LINGER_MS)],
        );
        recovered();
        return at - 1;
      } catch (error) {
        fellBack(error);
        return local.consume(slots, now);
      }
    },
    async read(keys, now) {
      if (keys.length === 0) return [];
      if (connecting) await connecting;
      try {
        const values = await redis.mget(...keys);
        recovered();
        return values.map((v) => (v === null ? 0 : Number(v)));
      } catch (error) {
        fellBack(error);
        return local.read(keys, now);
      }
    },
    async close() {},
  };
}
