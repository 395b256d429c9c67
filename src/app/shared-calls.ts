import { createHash } from 'node:crypto';

import type { Redis } from 'ioredis';

import type { CallInFlight, SharedCalls } from '../../gateway/index.ts';
import type { Logger } from '../log/index.ts';

/** Deletes a call's key only while it still names that call: a newer call under the same key keeps its own. */
const DELETE_IF_SAME = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/** The shared calls, and how to release the connection they listen on. */
export type RedisSharedCalls = SharedCalls & { close(): Promise<void> };

/**
 * The gateway's calls in flight on every instance, in Redis: each call's upstream id under a hash of
 * its key (connector, agent, upstream session and the caller's id: nothing a caller could replay)
 * for as long as the call may run, and one channel on which a cancellation reaches the instance
 * running the call. While Redis is unreachable each instance finds only its own calls, as without
 * Redis.
 */
export function createRedisSharedCalls(options: { redis: Redis; keyPrefix: string; ttlMs: number; log: Logger }): RedisSharedCalls {
  const { redis, log } = options;
  const channel = `${options.keyPrefix}gateway-cancel`;
  const keyOf = (key: string) => `${options.keyPrefix}gateway-call:${createHash('sha256').update(key).digest('hex')}`;
  /** This instance's calls, by Redis key. */
  const local = new Map<string, CallInFlight>();

  // A connection that subscribes can send nothing else. Subscribed again whenever it (re)connects.
  const subscriber = redis.duplicate();
  subscriber.on('error', () => undefined); // the command connection logs the outage
  subscriber.on('connect', () => (subscriber.stream as { unref?: () => void } | undefined)?.unref?.());
  subscriber.on('ready', () => void subscriber.subscribe(channel).catch(() => undefined));
  subscriber.on('message', (_channel: string, message: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (!Array.isArray(parsed)) return;
    const call = local.get(String(parsed[0]));
    // The same key may name a newer call by now (a caller reusing its id): only the one cancelled ends.
    if (call && call.upstreamId === parsed[1]) call.cancel();
  });

  return {
    add(key, call) {
      const shared = keyOf(key);
      local.set(shared, call);
      redis.set(shared, call.upstreamId, 'PX', options.ttlMs).catch(() => undefined);
      return () => {
        if (local.get(shared) === call) local.delete(shared);
        redis.eval(DELETE_IF_SAME, 1, shared, call.upstreamId).catch(() => undefined);
      };
    },

    async find(key) {
      const shared = keyOf(key);
      const upstreamId = await redis.get(shared).catch(() => null);
      if (!upstreamId) return undefined;
      return {
        upstreamId,
        cancel: () =>
          void redis.publish(channel, JSON.stringify([shared, upstreamId])).catch((error: unknown) => log.warn({ err: error }, 'a cancellation did not reach the instance running the call')),
      };
    },

    async close() {
      await subscriber.quit().catch(() => undefined);
    },
  };
}
