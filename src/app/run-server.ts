import { hostname } from 'node:os';

import type { Config } from '../../config/index.ts';
import { migrate } from '../db/index.ts';
import { randomToken, systemClock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { startBackgroundWork } from './background.ts';
import { createPlaza } from './create-app.ts';
import { openConfiguredDatabase } from './open-database.ts';
import { type RunningServer, startServer } from './server.ts';
import { watchSharedIssuer } from './shared-issuer-check.ts';
import { watchSharedRedis } from './shared-redis-check.ts';
import { acquireSpool } from './spool-lock.ts';

/** A running Plaza: its server and the one way to stop it cleanly. */
export interface RunningPlaza {
  server: RunningServer;
  /** Drains requests (bounded), flushes background writers, closes the database. Idempotent. */
  shutdown(): Promise<void>;
}

/** The database could not be reached or migrated when the server started (migrations on). */
export class DatabaseStartError extends Error {
  constructor(description: string, cause: unknown) {
    super(`cannot use the database (${description}): ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'DatabaseStartError';
  }
}

/** Opens storage, migrates (unless disabled), builds the app and listens. */
export async function runServer(configured: Config, log: Logger): Promise<RunningPlaza> {
  let config = configured;
  if (config.trustProxy !== false)
    log.info(
      { trust_proxy: config.trustProxy },
      'PLAZA_TRUST_PROXY is on: client addresses are taken from X-Forwarded-For, as the trusted proxies appended them',
    );
  const db = await openConfiguredDatabase(config, 'server');
  let releaseSpool = (): void => undefined;
  try {
    // Before migrations and the app: a server on another's spool takes a slot of its own.
    const spool = acquireSpool(config.receipts.spoolDir);
    releaseSpool = spool.release;
    if (spool.dir !== config.receipts.spoolDir)
      log.info(
        { spool_dir: spool.dir },
        `another server holds the receipt spool in ${config.receipts.spoolDir}: this one spools to ${spool.dir}`,
      );
    if (spool.adopted > 0)
      log.info(
        { spool_dir: spool.dir, files: spool.adopted },
        "took over receipts spooled by a stopped server; they are replayed with this server's own",
      );
    config = { ...config, receipts: { ...config.receipts, spoolDir: spool.dir } };
    // With migrations off, a database that is not up yet is no reason to stop: /health says 503
    // until it is.
    if (config.autoMigrate) {
      const report = await migrate(db.sql).catch((error: unknown) => {
        throw new DatabaseStartError(db.description, error);
      });
      if (report.applied.length > 0) log.info({ applied: report.applied }, 'applied migrations');
    }
    const plaza = createPlaza({ config, db, log });
    const server = await startServer(plaza.handler, { port: config.port, host: config.host, log });
    log.info({ url: server.url, storage: db.description }, `Plaza is listening on ${server.url}`);
    const background = startBackgroundWork({
      db,
      config,
      log,
      probeStore: plaza.marketplace.probeStore,
      hostBudget: plaza.marketplace.hostBudget,
    });
    const owner = `${hostname()}:${process.pid}:${randomToken(4)}`;
    // One instance at a time (a lease) signs checkpoints of the receipt log.
    const stopCheckpoints = config.background
      ? plaza.receiptLog.startCheckpointing({ intervalMs: config.receipts.checkpointIntervalMs, owner })
      : async () => undefined;
    // Several instances need one PostgreSQL and one Redis: say so when some lack the Redis of the others.
    const stopRedisCheck = config.databaseUrl
      ? watchSharedRedis({
          db,
          redis: plaza.redis,
          keyPrefix: config.rateLimits.keyPrefix,
          log,
          clock: systemClock,
          owner,
        })
      : async () => undefined;
    // …and one issuer (PUBLIC_BASE_URL), which providers may pin.
    const stopIssuerCheck = config.databaseUrl
      ? watchSharedIssuer({ db, issuer: config.publicBaseUrl, log, clock: systemClock })
      : async () => undefined;
    let done: Promise<void> | undefined;
    return {
      server,
      shutdown() {
        done ??= (async () => {
          plaza.endStreams();
          await server.stop(config.shutdownTimeoutMs);
          await background.stop();
          await stopCheckpoints();
          await Promise.all([stopRedisCheck(), stopIssuerCheck()]);
          // Flushes pending receipts before the database goes away.
          await plaza.close();
          await db.close();
          releaseSpool();
          log.info('Plaza stopped');
        })();
        return done;
      },
    };
  } catch (error) {
    await db.close();
    releaseSpool();
    throw error;
  }
}
