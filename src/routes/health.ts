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
  // Both answers serialised once (load balancers poll this); each gets its request_id appended.
  const answer = (up: boolean) => {
    const status = up ? 'ok' : 'unavailable';
    const text = JSON.stringify({
      status,
      service: deps.serviceName,
      shared_envelope: {
        success: up,
        code: up ? 'SUCCESS' : 'UNAVAILABLE',
        message: up ? 'Plaza is up.' : 'The database is not reachable.',
        data: { status, service: deps.serviceName },
      },
    });
    return `${text.slice(0, -1)},"request_id":`;
  };
  const answers = { up: answer(true), down: answer(false) };
  router.get('/health', async (req, res) => {
    const up = Date.now() < upUntil || (await databaseUp(deps.db));
    if (up && Date.now() >= upUntil) upUntil = Date.now() + UP_CACHE_MS;
    const body = `${up ? answers.up : answers.down}${JSON.stringify(req.requestId)}}`;
    // Written directly: no ETag to compute for an answer that must not be cached.
    res.writeHead(up ? 200 : 503, {
      'Cache-Control': 'no-store',
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  });
  return router;
}
