import type { Redis } from 'ioredis';

import { websiteContentSources } from '../../config/content/index.ts';
import type { Config } from '../../config/index.ts';
import type { PrismaClient } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { createRateLimiter } from '../rate-limit/index.ts';
import { loadWebsiteContent } from './content.ts';
import { buildIntentIndex } from './intent-classifier.ts';
import { createLeadService } from './leads.ts';
import type { WebsiteRouteDeps } from './routes.ts';

const ONE_MINUTE = 60;

/**
 * Builds the website's services from configuration: validated content (fails start-up when the
 * copy is inconsistent), the intent index, the lead service and the two per-client limiters
 * (shared through `redis` when given).
 */
export function createWebsite(deps: {
  config: Pick<Config, 'publicBaseUrl' | 'trustProxy' | 'rateLimits'>;
  prisma: PrismaClient;
  clock: Clock;
  log: Logger;
  redis?: Redis | undefined;
  contentSources?: Readonly<Record<string, unknown>>;
}): WebsiteRouteDeps {
  const { config, log, redis } = deps;
  const content = loadWebsiteContent({
    sources: deps.contentSources ?? websiteContentSources,
    baseUrl: config.publicBaseUrl,
  });
  const keyPrefix = config.rateLimits.keyPrefix;
  return {
    content,
    intentIndex: buildIntentIndex(content),
    leads: createLeadService({ prisma: deps.prisma, clock: deps.clock }),
    limits: {
      intent: createRateLimiter({
        policy: { name: 'intent', limit: config.rateLimits.intentPerMinute, windowSeconds: ONE_MINUTE },
        redis,
        keyPrefix,
        log,
      }),
      leads: createRateLimiter({
        policy: { name: 'leads', limit: config.rateLimits.leadsPerMinute, windowSeconds: ONE_MINUTE },
        redis,
        keyPrefix,
        log,
      }),
    },
    trustProxy: config.trustProxy !== false,
  };
}
