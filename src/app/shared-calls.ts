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
 * instance ends only the calls it relays itself, as without Redis. A client's answer to a request
 * Plaza sent it during a bridged call goes the same way on a second channel, with its payload.
 */
export function createRedisSharedCalls(options: { redis: Redis; keyPrefix: string; log: Logger }): RedisSharedCalls {
  const { redis, log } = options;
  const channel = `${options.keyPrefix}gateway-cancel`;
  const answers = `${options.keyPrefix}gateway-answer`;
  const hashOf = (key: string) => createHash('sha256').update(key).digest('hex');
  /** This instance's calls, by hashed key. */
  const local = new Map<string, () => void>();
  /** This instance's waiters for a client's answer, by hashed key. */
  const waiting = new Map<string, (payload: string) => void>();
  const received = (from: string, message: string) => {
    if (from === channel) return local.get(message)?.();
    const cut = message.indexOf('\n');
    if (cut > 0) waiting.get(message.slice(0, cut))?.(message.slice(cut + 1));
  };

  // A connection that subscribes can send nothing else. Subscribed again whenever it (re)connects.
  const subscriber = redis.duplicate();
  subscriber.on('error', () => undefined); // the command connection logs the outage
  subscriber.on('connect', () => (subscriber.stream as { unref?: () => void } | undefined)?.unref?.());
  subscriber.on('ready', () => void subscriber.subscribe(channel, answers).catch(() => undefined));
  subscriber.on('message', received);

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

    listen(key, deliver) {
      const hashed = hashOf(key);
      waiting.set(hashed, deliver);
      return () => {
        if (waiting.get(hashed) === deliver) waiting.delete(hashed);
      };
    },

    deliver(key, payload) {
      redis
        .publish(answers, `${hashOf(key)}\n${payload}`)
        .catch((error: unknown) =>
          log.warn({ err: error }, "a client's answer did not reach the instance waiting for it"),
        );
    },

    async close() {
      await subscriber.quit().catch(() => undefined);
    },
  };
}
