import { Router } from 'express';

import type { Database } from '../db/index.ts';

const PING_TIMEOUT_MS = 2_000;
/** A successful ping is trusted this long, so load balancers polling /health cost no queries. */
const UP_CACHE_MS = 1_000;

async function databaseUp(db: Database): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      db.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('ping timeout')), PING_TIMEOUT_MS);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /health` (spec §2.14): 200 with status `ok` when the database answers, 503 with status
 * `unavailable` when it does not. Anonymous, never cached.
 */
export function healthRoutes(deps: { db: Database; serviceName: string }): Router {
  const router = Router();
  let upUntil = 0;
  router.get('/health', async (_req, res) => {
    const up = Date.now() < upUntil || (await databaseUp(deps.db));
    if (up && Date.now() >= upUntil) upUntil = Date.now() + UP_CACHE_MS;
    const status = up ? 'ok' : 'unavailable';
    res.setHeader('Cache-Control', 'no-store');
    res.status(up ? 200 : 503).json({
      status,
      service: deps.serviceName,
      shared_envelope: {
        success: up,
        code: up ? 'SUCCESS' : 'UNAVAILABLE',
        message: up ? 'Plaza is up.' : 'The database is not reachable.',
        data: { status, service: deps.serviceName },
      },
    });
  });
  return router;
}
