/**
 * The JSON API's routes after the token API and the public catalog: AGPK contracts, accounts, the
 * JWKS, agents and their policies, marketplace listings, self-service, receipts and the OpenAPI
 * document that describes them. Mounted in this order, behind the JSON body reader.
 */
import type { Express } from 'express';

import { CONTRACT_DIR as AGPK_CONTRACT_DIR } from '../agpk/index.ts';
import { buildOpenApiDocument, type OpenApiOptions, openApiRoutes } from '../openapi/index.ts';
import { policyComponents, policyOperations, policySecuritySchemes } from '../policy/index.ts';
import { accountRoutes } from '../routes/account.ts';
import { agentPolicyRoutes } from '../routes/agent-policy.ts';
import { agentRoutes } from '../routes/agents.ts';
import { agpkContractRoutes } from '../routes/agpk-contract.ts';
import { jwksRoutes } from '../routes/jwks.ts';
import { marketplaceRoutes } from '../routes/marketplace.ts';
import { receiptRoutes } from '../routes/receipts.ts';
import { websiteOpenApiOptions } from '../website/index.ts';
import type { PlazaServices } from './plaza-services.ts';

/** Mounts the API routes on `app`. */
export function mountApiRoutes(
  app: Express,
  services: Pick<
    PlazaServices,
    | 'config'
    | 'log'
    | 'redis'
    | 'accounts'
    | 'keys'
    | 'agents'
    | 'verify'
    | 'oauth'
    | 'policy'
    | 'marketplace'
    | 'selfService'
    | 'receiptLog'
  >,
  https: boolean,
): void {
  const { config, log, redis, accounts, keys, agents, verify, oauth, policy, marketplace, selfService, receiptLog } =
    services;
  const openApi = buildOpenApiDocument(
    withPolicyRoutes(websiteOpenApiOptions({ serverUrl: config.publicBaseUrl, version: '1.0.0' })),
  );
  app.use(agpkContractRoutes({ dir: AGPK_CONTRACT_DIR }));
  app.use(accountRoutes({ accounts }));
  app.use(jwksRoutes({ keys }));
  app.use(
    agentRoutes({
      agents,
      verify,
      session: { sessions: selfService.sessions, https },
      writesPerMinute: config.agents.writesPerMinute,
      trustProxy: config.trustProxy !== false,
      redis,
      keyPrefix: config.rateLimits.keyPrefix,
      log,
      clients: oauth?.clients,
    }),
  );
  app.use(
    agentPolicyRoutes({
      policies: policy.service,
      verify,
      session: { sessions: selfService.sessions, https },
      writesPerMinute: config.agents.writesPerMinute,
      redis,
      keyPrefix: config.rateLimits.keyPrefix,
      log,
    }),
  );

  app.use(
    marketplaceRoutes({
      marketplace,
      accounts,
      writesPerMinute: config.marketplace.listingWritesPerMinute,
      trustProxy: config.trustProxy !== false,
      redis,
      keyPrefix: config.rateLimits.keyPrefix,
      log,
    }),
  );
  app.use(...selfService.routes);
  app.use(receiptRoutes({ accounts, receipts: receiptLog, checkpointMaxAgeMs: config.receipts.checkpointIntervalMs }));
  app.use(openApiRoutes({ document: openApi }));
}

/** The website's OpenAPI options with the agent policy routes (issue 35) added. */
export function withPolicyRoutes(options: OpenApiOptions): OpenApiOptions {
  return {
    ...options,
    components: { ...options.components, ...policyComponents },
    operations: [...options.operations, ...policyOperations],
    securitySchemes: { ...options.securitySchemes, ...policySecuritySchemes },
  };
}
