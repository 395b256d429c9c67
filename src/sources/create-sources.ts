import type { Config } from '../../config/index.ts';
import { createSourceWorker, type Resolver, type SourceWorker } from '../../probes/index.ts';
import { DEFAULT_EXTRACT_LIMITS, loadAgpkSchemas } from '../agpk/index.ts';
import type { PrismaClient } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import type { Mailer } from '../mail/index.ts';
import { loadDenyList } from './deny-list.ts';
import { createSourceInspector } from './inspect.ts';
import { rejectionMail } from './notify.ts';
import { createSourceService, type SourceService } from './source-service.ts';
import { createSourceStore } from './worker-store.ts';

/** What the registry and its worker are built from. */
export interface SourcesDeps {
  prisma: PrismaClient;
  clock: Clock;
  log: Logger;
  config: Config;
  mailer: Pick<Mailer, 'enqueue'>;
}

/** The registry service (routes, MCP tool). */
export function createSources(deps: Pick<SourcesDeps, 'prisma' | 'clock'>): SourceService {
  return createSourceService(deps);
}

/**
 * The package source worker wired to the database, the AGPK validator, the scan, and the mailer
 * (rejections of a known user's source send the registrant a system e-mail).
 */
export function createSourcesWorker(deps: SourcesDeps & { resolve?: Resolver; owner?: string }): SourceWorker {
  const { prisma, clock, log, config, mailer } = deps;
  const extractLimits = {
    ...DEFAULT_EXTRACT_LIMITS,
    maxTotalBytes: Math.max(config.sources.maxBytes * 8, 64 * 1024 * 1024),
  };
  const inspect = createSourceInspector({
    schemas: loadAgpkSchemas(),
    denyList: loadDenyList(config.sources.denyListFile),
    limits: extractLimits,
  });
  const store = createSourceStore({
    prisma,
    recheckMs: config.sources.recheckMs,
    notifyRejected: async (source) => {
      if (!source.accountId) return;
      const account = await prisma.account.findUnique({ where: { id: source.accountId } });
      if (!account) return;
      await mailer.enqueue(rejectionMail(source, account.email, config.publicBaseUrl));
    },
  });
  return createSourceWorker({
    store,
    inspect,
    clock,
    log,
    allowPrivateTargets: config.marketplace.allowPrivateTargets,
    maxBytes: config.sources.maxBytes,
    recheckMs: config.sources.recheckMs,
    ...(deps.resolve ? { resolve: deps.resolve } : {}),
    ...(deps.owner ? { owner: deps.owner } : {}),
  });
}
