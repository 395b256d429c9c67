import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Redis } from 'ioredis';

import type { Config } from '../../config/index.ts';
import {
  type Authorize,
  createAggregate,
  createHeldAnswers,
  createOriginCheck,
  createPassthrough,
  createSessionSealer,
  createUpstreamHttp,
  createUpstreamPool,
  GatewayError,
  type ReceiptSink,
  sendGatewayError,
  unsupportedEncoding,
} from '../../gateway/index.ts';
import { createGuardedAgent } from '../../probes/index.ts';
import type { ReceiptWriter } from '../../receipts/index.ts';
import type { AgentService } from '../agents/index.ts';
import {
  createConnectorCatalog,
  createPlatformServer,
  createTaskDirectory,
  gatewaySessionKey,
  PLATFORM_PROVIDER,
  type PlatformTools,
} from '../connectors/index.ts';
import type { Database } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { SigningKeyStore } from '../keys/index.ts';
import type { Logger } from '../log/index.ts';
import { createRedisSharedCalls } from './shared-calls.ts';

/** Purpose of the signing key that signs AGIN assertions (published in the JWKS). */
export const ASSERTION_KEY_PURPOSE = 'assertion';

/** The gateway's two entry points as plain Node handlers, and how to release what they hold. */
export interface GatewayHandlers {
  aggregate(req: IncomingMessage, res: ServerResponse): Promise<void>;
  passthrough(req: IncomingMessage, res: ServerResponse, provider: string): Promise<void>;
  /** Ends the open notification streams and refuses new ones: the server is stopping. */
  endStreams(): void;
  /** Bytes of answers this instance holds for clients that have not read them yet (in all, or one agent's). */
  heldAnswerBytes(agentId?: string): number;
  close(): Promise<void>;
}

/**
 * Wires the gateway module to Plaza's storage: agents authenticate against the database, connectors
 * and tools come from the marketplace tables, receipts go to the receipt writer, assertions are
 * signed with the `assertion` key, and outbound requests are SSRF-guarded.
 */
export function createGatewayHandlers(deps: {
  config: Config;
  db: Database;
  clock: Clock;
  keys: SigningKeyStore;
  agents: AgentService;
  receipts: ReceiptWriter;
  onCall?: (endpointId: string) => void;
  /** Told when a connector says its tool list changed (the catalog probes it again soon). */
  onToolsChanged?: (endpointId: string) => void;
  /** Plaza's own tools, served as the built-in provider `platform` (it takes precedence over a listing of that name). */
  platformTools?: PlatformTools;
  /** Whether an agent may make a call, asked on all three entry points (issue 35's policy); default: every call is allowed. */
  authorize?: Authorize;
  /** Shared with the other instances: where a cancellation sent to another instance than its call's finds it. */
  redis?: Redis | undefined;
  log: Logger;
}): GatewayHandlers {
  const { config, db, clock, keys, agents } = deps;
  const sharedCalls = deps.redis
    ? createRedisSharedCalls({ redis: deps.redis, keyPrefix: config.rateLimits.keyPrefix, log: deps.log })
    : undefined;
  const guarded = createGuardedAgent({
    allowPrivate: config.marketplace.allowPrivateTargets,
    timeoutMs: config.gateway.timeoutMs,
  });
  const http = createUpstreamHttp({ dispatcher: guarded.agent, checkUrl: guarded.checkUrl });
  const catalog = createConnectorCatalog({ prisma: db.prisma, clock });
  const receipts: ReceiptSink = { record: (receipt) => deps.receipts.write(receipt) };
  const assertionKey = async () => {
    const key = await keys.activeKey(ASSERTION_KEY_PURPOSE);
    return { kid: key.kid, privateKey: key.privateKey, keyObject: key.privateKeyObject };
  };
  // One count for both entry points: an agent's unread answers add up wherever it asked for them.
  const held = createHeldAnswers({ perAgent: config.gateway.heldBytesPerAgent, total: config.gateway.heldBytesTotal });
  const writeTimeoutMs = config.gateway.writeTimeoutMs;
  const platform = deps.platformTools
    ? createPlatformServer({ tools: deps.platformTools, agents, authorize: deps.authorize, receipts, clock })
    : undefined;
  // The sealing key lives in the database; loaded on first use, again on the next one if that failed.
  let sealer: Promise<ReturnType<typeof createSessionSealer>> | undefined;
  const sessionSealer = () => {
    sealer ??= gatewaySessionKey(db.prisma, clock).then((key) => createSessionSealer(key));
    sealer.catch(() => (sealer = undefined));
    return sealer;
  };
  const aggregate = createAggregate({
    local: platform?.local,
    catalog,
    agents,
    authorize: deps.authorize,
    receipts,
    pool: createUpstreamPool({
      http,
      timeoutMs: config.gateway.timeoutMs,
      maxResponseBytes: config.gateway.maxResponseBytes,
    }),
    assertionKey,
    issuer: config.publicBaseUrl,
    clock,
    serverInfo: { name: 'plaza', version: '1' },
    onCall: deps.onCall,
    held,
    writeTimeoutMs,
    sharedCalls,
    sealer: sessionSealer,
  });
  // The sealing key lives in the database; load it once, retry on the next request if that failed.
  let passthrough: Promise<ReturnType<typeof createPassthrough>> | undefined;
  const passthroughHandler = () => {
    passthrough ??= sessionSealer().then((sealer) =>
      createPassthrough({
        // Also endpoints that answer only callers with a credential of their own.
        directory: { byProvider: (provider) => catalog.routable(provider) },
        agents,
        authorize: deps.authorize,
        receipts,
        sealer,
        assertionKey,
        issuer: config.publicBaseUrl,
        clock,
        http,
        upstreamTimeoutMs: config.gateway.timeoutMs,
        maxResponseBytes: config.gateway.maxResponseBytes,
        onCall: deps.onCall,
        onToolsChanged: deps.onToolsChanged,
        sharedCalls,
        tasks: createTaskDirectory({ db, clock }),
        held,
        writeTimeoutMs,
      }),
    );
    passthrough.catch(() => (passthrough = undefined));
    return passthrough;
  };
  const originCheck = createOriginCheck({
    publicBaseUrl: config.publicBaseUrl,
    listenHost: config.host,
    allowedOrigins: config.gateway.allowedOrigins,
    allowedHosts: config.gateway.allowedHosts,
  });
  /**
   * Refused before anything reads it: a request from a foreign Origin or to a foreign Host (403,
   * DNS-rebinding protection, on every gateway endpoint), or a body sent compressed (415: MCP
   * defines no content coding).
   */
  const refused = (req: IncomingMessage, res: ServerResponse): boolean => {
    const foreign = originCheck(req);
    if (foreign !== undefined) {
      sendGatewayError(res, new GatewayError('origin_refused', foreign));
      return true;
    }
    const why = unsupportedEncoding(req.headers['content-encoding']);
    if (why === undefined) return false;
    sendGatewayError(res, new GatewayError('unsupported_encoding', why));
    return true;
  };
  return {
    aggregate: async (req, res) => (refused(req, res) ? undefined : aggregate(req, res)),
    passthrough: async (req, res, provider) =>
      refused(req, res)
        ? undefined
        : platform && provider === PLATFORM_PROVIDER
          ? platform.handle(req, res)
          : (await passthroughHandler())(req, res, provider),
    heldAnswerBytes: (agentId) => held.held(agentId),
    endStreams: () => {
      platform?.endStreams();
      aggregate.endStreams();
      if (passthrough)
        void passthrough
          .then(
            (handler) => handler.endStreams(),
            () => undefined,
          )
          .catch((error: unknown) => deps.log.warn({ err: error }, 'could not end the passthrough streams'));
    },
    close: async () => {
      await sharedCalls?.close();
      await guarded.agent.close();
    },
  };
}
