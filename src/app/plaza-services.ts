/**
 * The services one Plaza is composed of, built over one database in the order they depend on each
 * other: stores and receipts first, then the marketplace, OAuth, agents, self-service, the policy
 * and the gateway that uses them all. createPlaza mounts their routes; close() releases them.
 */
import type { Redis } from 'ioredis';

import type { Config } from '../../config/index.ts';
import {
  createJwsCheckpointSigner,
  createReceiptLog,
  createReceiptWriter,
  type ReceiptLog,
  type ReceiptWriter,
} from '../../receipts/index.ts';
import { type AccountService, createAccountService } from '../accounts/index.ts';
import { type AgentService, createAgentService } from '../agents/index.ts';
import type { Database } from '../db/index.ts';
import { type Clock, systemClock } from '../kernel/index.ts';
import { createSigningKeyStore, type SigningKeyStore } from '../keys/index.ts';
import type { Logger } from '../log/index.ts';
import { createMarketplace, createProbeHostBudget, type Marketplace } from '../marketplace/index.ts';
import { createPolicy, type Policy } from '../policy/index.ts';
import { createRateLimiter, createRedisClient } from '../rate-limit/index.ts';
import { TOKEN_API_AUDIENCE } from '../routes/token-api.ts';
import { type BearerVerifier, createBearerVerifier, createGuestTokens } from '../tokens/index.ts';
import { createWebsite } from '../website/index.ts';
import type { AppDeps } from './create-app.ts';
import { createGatewayHandlers, type GatewayHandlers } from './gateway.ts';
import { createOAuthServer, type OAuthServer } from './oauth-server.ts';
import { createSelfService, type SelfService } from './self-service.ts';

/** Every service of one Plaza, with what it was built from. */
export interface PlazaServices {
  config: Config;
  db: Database;
  log: Logger;
  clock: Clock;
  accounts: AccountService;
  keys: SigningKeyStore;
  receiptLog: ReceiptLog;
  receiptWriter: ReceiptWriter;
  /** The shared Redis connection (REDIS_URL), when there is one. */
  redis: Redis | undefined;
  website: ReturnType<typeof createWebsite>;
  marketplace: Marketplace;
  /** The OAuth authorization server, when OAuth is enabled. */
  oauth: OAuthServer | undefined;
  agents: AgentService;
  verify: BearerVerifier;
  selfService: SelfService;
  policy: Policy;
  gateway: GatewayHandlers;
}

/** Builds every service of one Plaza over `deps.db`. */
export function createPlazaServices(deps: AppDeps): PlazaServices {
  const { config, db, log } = deps;
  const clock = deps.clock ?? systemClock;
  const accounts = createAccountService({ prisma: db.prisma, clock });
  // Checkpoint signatures must stay verifiable for as long as receipts are kept.
  const keys = createSigningKeyStore({ prisma: db.prisma, clock, retentionSeconds: { receipts: Infinity } });
  const receiptLog = createReceiptLog({
    db,
    log,
    clock,
    signer: createJwsCheckpointSigner(() => keys.activeKey('receipts')),
  });
  const receiptWriter = createReceiptWriter({
    db,
    log,
    clock,
    durability: config.receipts.durability,
    spoolDir: config.receipts.spoolDir,
  });
  const redis = config.redisUrl
    ? createRedisClient(config.redisUrl, log, { commandTimeoutMs: config.redisCommandTimeoutMs })
    : undefined;
  const website = createWebsite({ config, prisma: db.prisma, clock, log, redis });
  const marketplace = createMarketplace({
    db,
    clock,
    log,
    settings: config.marketplace,
    hostBudget: createProbeHostBudget(
      createRateLimiter({
        policy: { name: 'probe-host', limit: config.marketplace.probeHostRequestsPerMinute, windowSeconds: 60 },
        redis,
        keyPrefix: config.rateLimits.keyPrefix,
        log,
      }),
    ),
  });
  const oauth = config.oauth.enabled ? createOAuthServer({ config, db, clock, keys, log }) : undefined;
  const agents = createAgentService({
    prisma: db.prisma,
    clock,
    ...(oauth ? { accessTokens: oauth.accessTokens } : {}),
  });
  const verify = createBearerVerifier({
    guestTokens: createGuestTokens({ keys, clock, issuer: config.publicBaseUrl, audience: TOKEN_API_AUDIENCE }),
    accounts,
  });
  const selfService = createSelfService({ config, db, log, clock, accounts, redis });
  // Who may call what (issue 35): the gateway asks it on every entry point.
  const policy = createPolicy({ prisma: db.prisma, redis, keyPrefix: config.rateLimits.keyPrefix, clock, log });
  const gateway = createGatewayHandlers({
    config,
    db,
    clock,
    keys,
    agents,
    receipts: receiptWriter,
    onCall: (endpointId) => marketplace.recordDemand(endpointId),
    onToolsChanged: (endpointId) => marketplace.refreshTools(endpointId),
    platformTools: selfService.platformTools,
    authorize: policy.authorize,
    redis,
    log,
  });
  return {
    config,
    db,
    log,
    clock,
    accounts,
    keys,
    receiptLog,
    receiptWriter,
    redis,
    website,
    marketplace,
    oauth,
    agents,
    verify,
    selfService,
    policy,
    gateway,
  };
}
