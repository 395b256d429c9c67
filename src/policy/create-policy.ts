/** Composes the policy module for one Plaza instance: store, counters, cached state, hook and API service. */
import type { Redis } from 'ioredis';

import type { Authorize } from '../../gateway/index.ts';
import type { PrismaClient } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { authorizeWith } from './authorize.ts';
import { createMemoryCounters, createRedisCounters, type QuotaCounters } from './counters.ts';
import { createPolicyService, type PolicyService } from './service.ts';
import { createPolicyState } from './state.ts';
import { createPolicyStore } from './store.ts';

/** The policy module of one instance. */
export interface Policy {
  /** The gateway's authorize hook. */
  authorize: Authorize;
  service: PolicyService;
  close(): Promise<void>;
}

/** Options of createPolicy. */
export interface PolicyOptions {
  prisma: PrismaClient;
  /** Shared counters when given; else each instance counts alone (logged once at start). */
  redis?: Redis | undefined;
  keyPrefix: string;
  clock: Clock;
  log: Logger;
  /** How long an instance trusts what it read of a policy (default 2 s: changes are effective everywhere within 5 s). */
  cacheTtlMs?: number;
}

/** Creates the policy module. */
export function createPolicy(options: PolicyOptions): Policy {
  const { clock, log, keyPrefix } = options;
  if (options.cacheTtlMs !== undefined && !(options.cacheTtlMs >= 0 && options.cacheTtlMs <= 5_000))
    throw new Error('createPolicy: cacheTtlMs must be 0 to 5000 (a change must be effective within 5 s).');
  const store = createPolicyStore(options.prisma);
  const state = createPolicyState({ store, clock, ttlMs: options.cacheTtlMs });
  const counters: QuotaCounters = options.redis ? createRedisCounters(options.redis, log) : createMemoryCounters();
  return {
    authorize: authorizeWith({ state, counters, keyPrefix, clock, log }),
    service: createPolicyService({ store, state, counters, keyPrefix, clock }),
    close: () => counters.close(),
  };
}
