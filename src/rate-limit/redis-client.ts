import { createRequire } from 'node:module';

import type { Redis } from 'ioredis';

import type { Logger } from '../log/index.ts';

// ioredis (CommonJS) is loaded only when Redis is configured: ~0.2 s less start-up without it.
const require = createRequire(import.meta.url);

const LOG_EVERY_MS = 60_000;

/**
 * A Redis connection for shared counters. Commands fail fast instead of queueing while Redis is
 * unreachable (callers fall back to local state), reconnects go on in the background, and
 * connection errors are logged at most once a minute instead of crashing the process.
 */
export function createRedisClient(url: string, log: Logger, options: { commandTimeoutMs?: number } = {}): Redis {
  const { Redis: RedisClient } = require('ioredis') as { Redis: typeof Redis };
  const client = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
  });
  let lastLogged = 0;
  client.on('error', (error: Error) => {
    const now = Date.now();
    if (now - lastLogged < LOG_EVERY_MS) return;
    lastLogged = now;
    log.warn({ err: error }, 'Redis connection error');
  });
  // Plaza's app has no shutdown hook for this connection (the HTTP server owns the process
  // lifetime): an idle counter connection must not keep a stopping process alive.
  client.on('connect', () => {
    (client.stream as { unref?: () => void } | undefined)?.unref?.();
  });
  return client;
}
