import { createHash } from 'node:crypto';

import type { Database } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { repeatEvery } from './repeat-every.ts';

/** How often an instance notes its issuer again and looks at the others'. */
const CHECK_MS = 60_000;
/** How long a note lasts without being renewed (an instance that stopped leaves it behind this long). */
const NOTE_MS = 150_000;
const NOTE_PREFIX = 'issuer-place:';
/** Longest issuer text kept in a note (the operator's text, of any length). */
const MAX_SHOWN = 300;
/** The issuer an instance names when PUBLIC_BASE_URL is not set (or is set to the same). */
const DEFAULT_ISSUER = /^http:\/\/localhost:\d{1,5}$/;

/** What watchSharedIssuer needs: the database the instances share and this instance's issuer. */
export interface SharedIssuerCheckOptions {
  db: Database;
  /** PUBLIC_BASE_URL, or its default `http://localhost:<port>`. */
  issuer: string;
  log: Logger;
  clock: Clock;
  /** Overrides for tests. */
  checkMs?: number;
}

/**
 * Instances on one database sign guest tokens and AGIN assertions with the same keys, but each
 * names its own PUBLIC_BASE_URL as the issuer (`iss`). When they differ (unset on some instances,
 * so `http://localhost:<port>`, or set to different addresses), a provider that pins `iss` refuses
 * the calls some instances stamp, and a client's guest token from one instance is refused by
 * another. Each instance notes its issuer in `job_leases` (`issuer-place:<hash>`, the issuer itself
 * as the note's owner, renewed every minute) and warns, naming the others, when it sees another
 * one. On PostgreSQL only: the embedded database has one instance. When the issuer is a localhost
 * address (PUBLIC_BASE_URL not set, or set to one) it also says once, at start, that the issuer
 * names no address providers or clients elsewhere can reach.
 * Returns a stop, which waits for a check under way.
 */
export function watchSharedIssuer(options: SharedIssuerCheckOptions): () => Promise<void> {
  const { db, issuer, log, clock } = options;
  const here = `${NOTE_PREFIX}${createHash('sha256').update(issuer).digest('hex').slice(0, 16)}`;
  let warned = '';
  if (DEFAULT_ISSUER.test(issuer)) {
    log.warn(
      { issuer },
      `The issuer is a localhost address (PUBLIC_BASE_URL is not set, or names localhost): guest tokens and AGIN assertions name ${issuer} as their issuer and links in e-mails point there. Set PUBLIC_BASE_URL to the address clients and providers reach Plaza at, the same on every instance (docs/scale-out.md).`,
    );
  }

  const check = async (): Promise<void> => {
    const now = clock.now();
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO "job_leases" ("name", "owner", "until") VALUES ($1, $2, $3::timestamptz)
       ON CONFLICT ("name") DO UPDATE SET "owner" = EXCLUDED."owner", "until" = EXCLUDED."until"`,
      here,
      issuer.slice(0, MAX_SHOWN),
      new Date(now + NOTE_MS).toISOString(),
    );
    const notes = await db.prisma.$queryRawUnsafe<{ owner: string }[]>(
      `SELECT "owner" FROM "job_leases" WHERE "name" LIKE $1 AND "name" <> $2 AND "until" > $3::timestamptz ORDER BY "owner"`,
      `${NOTE_PREFIX}%`,
      here,
      new Date(now).toISOString(),
    );
    const elsewhere = notes.map((n) => n.owner);
    const seen = elsewhere.join('\n');
    if (seen === warned) return;
    warned = seen;
    if (seen === '') {
      log.info({ issuer }, 'Plaza instances on this database name one issuer again');
      return;
    }
    // Instances that all name a localhost default accept each other's guest tokens
    // (localInstanceIssuers, src/tokens/guest-tokens.ts): only the assertions' `iss` differ then.
    const allDefaults = DEFAULT_ISSUER.test(issuer) && elsewhere.every((other) => DEFAULT_ISSUER.test(other));
    log.warn(
      { issuer, elsewhere },
      allDefaults
        ? 'Plaza instances on this database name different issuers, each its own http://localhost:<port>: guest tokens pass between them, but a provider that checks the `iss` of AGIN assertions refuses the calls some of them stamp. Set PUBLIC_BASE_URL to the same address on every instance (docs/scale-out.md).'
        : 'Plaza instances on this database name different issuers: a provider that checks the `iss` of AGIN assertions refuses the calls some of them stamp, and guest tokens from one may be refused by another. Set PUBLIC_BASE_URL to the same public address on every instance (docs/scale-out.md).',
    );
  };

  const repeated = repeatEvery(options.checkMs ?? CHECK_MS, () =>
    check().catch((error: unknown) => log.debug({ err: error }, 'could not compare issuers with the other instances')),
  );
  return () => repeated.stop();
}
