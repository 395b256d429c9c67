import { createHash } from 'node:crypto';

import type { Redis } from 'ioredis';

import type { SharedCalls } from '../../gateway/index.ts';
import type { Logger } from '../log/index.ts';

/** The shared calls, and how to release the connection they listen on. */
export type RedisSharedCalls = SharedCalls & { close(): Promise<void> };

/**
 * Cancellations of gateway calls passed between instances over one Redis channel. A call is known
 * only to the instance relaying it (nothing is written per call); an instance that receives a
 * client's notifications/cancelled for a call it does not relay publishes the call's key, hashed
 * (connector, agent, upstream session and the caller's id: nothing a listener could replay), and
 * the instance relaying it tells its upstream and ends the call. While Redis is unreachable each
 * instance ends only the calls it relays itself, as without Redis.
 */
export function createRedisSharedCalls(options: { redis: Redis; keyPrefix: string; log: Logger }): RedisSharedCalls {
  const { redis, log } = options;
  const channel = `${options.keyPrefix}gateway-cancel`;
  const hashOf = (key: string) => createHash('sha256').update(key).digest('hex');
  /** This instance's calls, by hashed key. */
  const local = new Map<string, () => void>();

  // A connection that subscribes can send nothing else. Subscribed again whenever it (re)connects.
  const subscriber = redis.duplicate();
  subscriber.on('error', () => undefined); // the command connection logs the outage
  subscriber.on('connect', () => (subscriber.stream as { unref?: () => void } | undefined)?.unref?.());
  subscriber.on('ready', () => void subscriber.subscribe(channel).catch(() => undefined));
  subscriber.on('message', (_channel: string, message: string) => local.get(message)?.());

  return {
    add(key, cancel) {
      const hashed = hashOf(key);
      local.set(hashed, cancel);
      return () => {
        if (local.get(hashed) === cancel) local.delete(hashed);
      };
    },

    cancel(key) {
      redis
        .publish(channel, hashOf(key))
        .catch((error: unknown) =>
          log.warn({ err: error }, 'a cancellation did not reach the instance relaying the call'),
        );
    },

    async close() {
      await subscriber.quit().catch(() => undefined);
    },
  };
}
