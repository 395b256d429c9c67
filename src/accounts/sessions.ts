import type { PrismaClient } from '../db/index.ts';
import { AuthError, type Clock, hashSecret, newId, randomToken } from '../kernel/index.ts';

/** How long a browser session lasts without being used. */
export const SESSION_TTL_MS = 30 * 24 * 3600_000;

/** A signed-in browser session. `token` goes into the cookie and is never stored. */
export interface NewSession {
  id: string;
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

/** What a valid session cookie resolves to. */
export interface SessionPrincipal {
  kind: 'session';
  sessionId: string;
  accountId: string;
  csrfToken: string;
  expiresAt: Date;
}

/** Browser sessions: stored as sha256 of the cookie value, sliding expiry, revocable. */
export interface SessionService {
  create(accountId: string): Promise<NewSession>;
  /** Resolves a cookie value, or throws AuthError (unknown, expired, revoked, inactive account). */
  authenticate(token: string): Promise<SessionPrincipal>;
  revoke(sessionId: string): Promise<void>;
  /** Signs an account out everywhere (after a password change). */
  revokeAll(accountId: string): Promise<void>;
}

/** Creates the session service over the database. */
export function createSessionService(deps: { prisma: PrismaClient; clock: Clock }): SessionService {
  const { prisma, clock } = deps;
  return {
    async create(accountId) {
      const token = `sess_${randomToken(32)}`;
      const csrfToken = randomToken(24);
      const now = clock.now();
      const expiresAt = new Date(now + SESSION_TTL_MS);
      const id = newId('ses', now);
      await prisma.session.create({
        data: {
          id,
          accountId,
          tokenHash: hashSecret(token),
          csrfToken,
          createdAt: new Date(now),
          lastSeenAt: new Date(now),
          expiresAt,
        },
      });
      return { id, token, csrfToken, expiresAt };
    },

    async authenticate(token) {
      if (!/^sess_[0-9a-z]{20,80}$/.test(token)) throw new AuthError('Not signed in.');
      const row = await prisma.session.findUnique({
        where: { tokenHash: hashSecret(token) },
        include: { account: { select: { status: true } } },
      });
      const now = clock.now();
      if (!row || row.revokedAt !== null || row.expiresAt.getTime() <= now)
        throw new AuthError('Your session has ended; sign in again.');
      if (row.account.status !== 'active') throw new AuthError('This account is not active.');
      let expiresAt = row.expiresAt;
      // Slide the expiry at most once an hour, so a busy session does not write on every request.
      if (now - row.lastSeenAt.getTime() > 3600_000) {
        expiresAt = new Date(now + SESSION_TTL_MS);
        await prisma.session.update({ where: { id: row.id }, data: { lastSeenAt: new Date(now), expiresAt } });
      }
      return { kind: 'session', sessionId: row.id, accountId: row.accountId, csrfToken: row.csrfToken, expiresAt };
    },

    async revoke(sessionId) {
      await prisma.session.updateMany({
        where: { id: sessionId, revokedAt: null },
        data: { revokedAt: new Date(clock.now()) },
      });
    },

    async revokeAll(accountId) {
      await prisma.session.updateMany({
        where: { accountId, revokedAt: null },
        data: { revokedAt: new Date(clock.now()) },
      });
    },
  };
}
