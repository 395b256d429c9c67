import { createHash } from 'node:crypto';

import type { Redis } from 'ioredis';

import type { Database } from '../db/index.ts';
import { type Clock, randomToken } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { repeatEvery } from './repeat-every.ts';

/** How often an instance notes its Redis again and looks at the others'. */
const CHECK_MS = 60_000;
/** How soon an instance tries again when its Redis did not answer (at start-up it is still connecting). */
const RETRY_MS = 2_000;
/** How long a note lasts without being renewed (an instance that stopped leaves it behind this long). */
const NOTE_MS = 150_000;
const NOTE_PREFIX = 'redis-place:';
/**
 * The note of an instance without Redis from before 2026-11-27, when notes were named by the key
 * prefix alone (`shared-redis:redis-<hash>`). Those of instances with Redis name no id and are left
 * out, or every instance would warn during a rolling upgrade; this one still means what it says.
 */
const LEGACY_NONE = 'shared-redis:none';
/** The key (under the rate-limit prefix) naming this Redis database: the first instance sets it. */
const MARK_KEY = 'instances:redis-id';
const MARK_SCRIPT = `redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`;

/** What watchSharedRedis needs: the database the instances share, and this instance's Redis. */
export interface SharedRedisCheckOptions {
  db: Database;
  /** This instance's Redis connection (REDIS_URL), if any. */
  redis: Redis | undefined;
  /** PLAZA_RATE_LIMIT_KEY_PREFIX. */
  keyPrefix: string;
  log: Logger;
  clock: Clock;
  owner: string;
  /** Overrides for tests. */
  checkMs?: number;
  retryMs?: number;
}

/**
 * Instances on one database that do not share one Redis (REDIS_URL set on some and not others,
 * pointing at another server or database number, or another PLAZA_RATE_LIMIT_KEY_PREFIX) each
 * count rate limits on their own and pass no cancellation of a gateway call to the others, and
 * nothing else shows it. The first instance to reach a Redis database stores a random id under the
 * prefix there (`<prefix>instances:redis-id`); every instance reads it back, so instances share an
 * id exactly when they share the Redis database and the prefix. Each instance notes in
 * `job_leases` where it keeps its counts (a row per id, renewed every minute) and warns when it
 * sees another one in use. Returns a stop, which waits for a check under way.
 */
export function watchSharedRedis(options: SharedRedisCheckOptions): () => Promise<void> {
  const { db, redis, keyPrefix, log, clock } = options;
  let mark: string | undefined;
  let noted: string | undefined;
  let warned = '';
  let retry: NodeJS.Timeout | undefined;

  /** This instance's place: `none` without Redis, undefined while its Redis has not answered yet. */
  const place = async (): Promise<string | undefined> => {
    if (!redis) return 'none';
    try {
      const value = await redis.eval(MARK_SCRIPT, 1, `${keyPrefix}${MARK_KEY}`, randomToken(16));
      if (typeof value === 'string') mark = value;
    } catch {
      // Unreachable for now: keep the id last read (Redis down is warned about where it is used).
    }
    // The prefix is hashed too: it is the operator's text, of any length.
    return mark === undefined
      ? undefined
      : `redis-${createHash('sha256').update(`${keyPrefix}\n${mark}`).digest('hex').slice(0, 16)}`;
  };

  const check = async (): Promise<boolean> => {
    const here = await place();
    if (here === undefined) return false;
    const now = clock.now();
    // The id changed (Redis lost it and another was set): the old note names no place any more.
    if (noted !== undefined && noted !== here)
      await db.prisma.$executeRawUnsafe(`DELETE FROM "job_leases" WHERE "name" = $1`, `${NOTE_PREFIX}${noted}`);
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO "job_leases" ("name", "owner", "until") VALUES ($1, $2, $3::timestamptz)
       ON CONFLICT ("name") DO UPDATE SET "owner" = EXCLUDED."owner", "until" = EXCLUDED."until"`,
      `${NOTE_PREFIX}${here}`,
      options.owner,
      new Date(now + NOTE_MS).toISOString(),
    );
    noted = here;
    const notes = await db.prisma.$queryRawUnsafe<{ name: string }[]>(
      `SELECT "name" FROM "job_leases" WHERE ("name" LIKE $1 OR ("name" = $4 AND $2 <> $5)) AND "name" <> $2 AND "until" > $3::timestamptz ORDER BY "name"`,
      `${NOTE_PREFIX}%`,
      `${NOTE_PREFIX}${here}`,
      new Date(now).toISOString(),
      LEGACY_NONE,
      `${NOTE_PREFIX}none`,
    );
    const elsewhere = notes.map((n) =>
      n.name === `${NOTE_PREFIX}none` || n.name === LEGACY_NONE
        ? 'no REDIS_URL'
        : redis
          ? 'another Redis, database number or key prefix'
          : 'Redis',
    );
    const seen = elsewhere.join(', ');
    if (seen === warned) return true;
    warned = seen;
    if (seen === '') {
      log.info('Plaza instances on this database share one Redis again');
      return true;
    }
    log.warn(
      { here: redis ? 'Redis' : 'no REDIS_URL', elsewhere },
      'Plaza instances on this database do not share one Redis: each counts rate limits on its own (clients get more than the limits) and a cancelled gateway call on another of them runs on. Set the same REDIS_URL (server and database number) and PLAZA_RATE_LIMIT_KEY_PREFIX on every instance (docs/scale-out.md).',
    );
    return true;
  };

  const repeated = repeatEvery(options.checkMs ?? CHECK_MS, () =>
    check()
      .then((done) => {
        clearTimeout(retry);
        if (!done) retry = setTimeout(() => repeated.runNow(), options.retryMs ?? RETRY_MS).unref();
      })
      .catch((error: unknown) =>
        log.debug({ err: error }, 'could not compare Redis settings with the other instances'),
      ),
  );
  return async () => {
    clearTimeout(retry);
    await repeated.stop();
    clearTimeout(retry);
  };
}
