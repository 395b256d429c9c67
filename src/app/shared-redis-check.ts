import { createHash } from 'node:crypto';

import type { Config } from '../../config/index.ts';
import type { Database } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';

/** How often an instance notes its Redis again and looks at the others'. */
const CHECK_MS = 60_000;
/** How long a note lasts without being renewed (an instance that stopped leaves it behind this long). */
const NOTE_MS = 150_000;
const NOTE_PREFIX = 'shared-redis:';

/**
 * Instances on one database that do not share one Redis (REDIS_URL set on some and not others, or
 * another PLAZA_RATE_LIMIT_KEY_PREFIX) each count rate limits on their own and pass no cancellation
 * of a gateway call to the others, and nothing else shows it. Each instance notes in `job_leases` where it keeps them (a row per
 * place, renewed every minute) and warns when it sees another place in use. Returns a stop.
 */
export function watchSharedRedis(deps: { db: Database; config: Config; log: Logger; clock: Clock; owner: string }): () => void {
  const { db, config, log, clock } = deps;
  // The prefix hashed: it is the operator's text, of any length.
  const here = config.redisUrl ? `redis-${createHash('sha256').update(config.rateLimits.keyPrefix).digest('hex').slice(0, 16)}` : 'none';
  let warned = '';

  const check = async () => {
    const now = clock.now();
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO "job_leases" ("name", "owner", "until") VALUES ($1, $2, $3::timestamptz)
       ON CONFLICT ("name") DO UPDATE SET "owner" = EXCLUDED."owner", "until" = EXCLUDED."until"`,
      `${NOTE_PREFIX}${here}`,
      deps.owner,
      new Date(now + NOTE_MS).toISOString(),
    );
    const notes = await db.prisma.$queryRawUnsafe<{ name: string }[]>(
      `SELECT "name" FROM "job_leases" WHERE "name" LIKE $1 AND "name" <> $2 AND "until" > $3::timestamptz ORDER BY "name"`,
      `${NOTE_PREFIX}%`,
      `${NOTE_PREFIX}${here}`,
      new Date(now).toISOString(),
    );
    const elsewhere = notes.map((n) => (n.name === `${NOTE_PREFIX}none` ? 'no REDIS_URL' : config.redisUrl ? 'Redis under another key prefix' : 'Redis'));
    const seen = elsewhere.join(', ');
    if (seen === warned) return;
    warned = seen;
    if (seen === '') {
      log.info('Plaza instances on this database share one Redis again');
      return;
    }
    log.warn(
      { here: config.redisUrl ? 'Redis' : 'no REDIS_URL', elsewhere },
      'Plaza instances on this database do not share one Redis: each counts rate limits on its own (clients get more than the limits) and a cancelled gateway call on another of them runs on. Set the same REDIS_URL and PLAZA_RATE_LIMIT_KEY_PREFIX on every instance (docs/scale-out.md).',
    );
  };

  const run = () => void check().catch((error: unknown) => log.debug({ err: error }, 'could not compare Redis settings with the other instances'));
  run();
  const timer = setInterval(run, CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
