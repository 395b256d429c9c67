import type { Router } from 'express';
import type { Redis } from 'ioredis';

import type { Config } from '../../config/index.ts';
import {
  type AccountService,
  createKeyManagement,
  createSessionService,
  createSignInService,
  EMAILS_PER_ADDRESS_PER_MINUTE,
  type SessionService,
  type SignInService,
} from '../accounts/index.ts';
import { createPlatformTools, type PlatformTools } from '../connectors/index.ts';
import type { Database } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { createMailer, type Mailer } from '../mail/index.ts';
import { createRateLimiter } from '../rate-limit/index.ts';
import { authSessionRoutes } from '../routes/auth-session.ts';
import { sourceRoutes } from '../routes/sources.ts';
import { createSources, type SourceService } from '../sources/index.ts';

/** Accounts with sessions, system e-mail and the package source registry, composed (issue 8). */
export interface SelfService {
  mailer: Mailer;
  signIn: SignInService;
  /** Signed-in browser sessions (the cookie some API routes accept besides a Bearer credential). */
  sessions: SessionService;
  sources: SourceService;
  /** The tools of the built-in `platform` MCP provider. */
  platformTools: PlatformTools;
  routes: Router[];
  close(): Promise<void>;
}

/** Builds the self-service accounts, the mailer and the source registry with their routes. */
export function createSelfService(deps: {
  config: Config;
  db: Database;
  log: Logger;
  clock: Clock;
  accounts: AccountService;
  redis: Redis | undefined;
}): SelfService {
  const { config, db, log, clock } = deps;
  const prisma = db.prisma;
  const https = config.publicBaseUrl.startsWith('https:');
  const mailer = createMailer({ prisma, clock, log, smtpUrl: config.mail.smtpUrl, from: config.mail.from });
  const sessions = createSessionService({ prisma, clock });
  const signIn = createSignInService({
    prisma,
    clock,
    sessions,
    send: (m) => mailer.enqueue(m),
    publicBaseUrl: config.publicBaseUrl,
  });
  const sources = createSources({ prisma, clock });
  const common = {
    trustProxy: config.trustProxy !== false,
    redis: deps.redis,
    keyPrefix: config.rateLimits.keyPrefix,
    log,
  };
  // One count per address for every way of asking for a sign-in or reset e-mail.
  const perEmailLimiter = createRateLimiter({
    policy: {
      name: 'auth-email',
      limit: Math.min(EMAILS_PER_ADDRESS_PER_MINUTE, config.auth.requestsPerMinute),
      windowSeconds: 60,
    },
    redis: deps.redis,
    keyPrefix: config.rateLimits.keyPrefix,
    log,
  });
  // One count for both ways of registering a source (the HTTP routes and the MCP tool).
  const sourcesLimiter = createRateLimiter({
    policy: { name: 'sources', limit: config.sources.registrationsPerMinute, windowSeconds: 60 },
    redis: deps.redis,
    keyPrefix: config.rateLimits.keyPrefix,
    log,
  });
  const routes = [
    authSessionRoutes({
      signIn,
      sessions,
      keys: createKeyManagement({ prisma, clock }),
      emailDelivery: mailer.mode,
      https,
      requestsPerMinute: config.auth.requestsPerMinute,
      perEmailLimiter,
      ...common,
    }),
    sourceRoutes({
      sources,
      accounts: deps.accounts,
      sessions,
      https,
      allowPrivateTargets: config.marketplace.allowPrivateTargets,
      limiter: sourcesLimiter,
      trustProxy: common.trustProxy,
    }),
  ];
  const platformTools = createPlatformTools({
    signIn,
    sources,
    limiter: createRateLimiter({
      policy: { name: 'platform-account', limit: config.auth.requestsPerMinute, windowSeconds: 60 },
      redis: deps.redis,
      keyPrefix: config.rateLimits.keyPrefix,
      log,
    }),
    perEmailLimiter,
    sourcesLimiter,
    emailDelivery: mailer.mode,
    allowPrivateTargets: config.marketplace.allowPrivateTargets,
    log,
  });
  return { mailer, signIn, sessions, sources, platformTools, routes, close: () => mailer.close() };
}
