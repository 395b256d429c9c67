import type { NextFunction, Request, Response } from 'express';

import {
  type AccountService,
  bearerToken,
  type NewSession,
  SESSION_TTL_MS,
  type SessionPrincipal,
  type SessionService,
} from '../accounts/index.ts';
import { readCookie } from '../http/index.ts';
import { AuthError, digestsEqual, ForbiddenError, hashSecret } from '../kernel/index.ts';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by requireSession / requireAccountActor: the signed-in browser session, if that was the credential. */
    accountSession?: SessionPrincipal;
    /** Set by requireAccountActor: the account a cookie or API key acts for. */
    actingAccountId?: string;
  }
}

/** Cookie names: the `__Host-` prefix (Secure, Path=/, no Domain) whenever Plaza is served over HTTPS. */
export function cookieNames(https: boolean): { session: string; csrf: string } {
  return https
    ? { session: '__Host-plaza_session', csrf: '__Host-plaza_csrf' }
    : { session: 'plaza_session', csrf: 'plaza_csrf' };
}

/** Sets a new session's cookies: the HttpOnly session, and the CSRF token the site's scripts read. */
export function setSessionCookies(res: Response, session: NewSession, https: boolean): void {
  const names = cookieNames(https);
  res.cookie(names.session, session.token, {
    httpOnly: true,
    secure: https,
    sameSite: 'lax',
    path: '/',
    maxAge: SESSION_TTL_MS,
  });
  // Readable by the site's scripts (double-submit); useless without the HttpOnly session cookie.
  res.cookie(names.csrf, session.csrfToken, {
    httpOnly: false,
    secure: https,
    sameSite: 'lax',
    path: '/',
    maxAge: SESSION_TTL_MS,
  });
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Checks the CSRF header of a cookie-authenticated write against the session's token (403 otherwise). */
export function checkCsrf(req: Request, session: SessionPrincipal): void {
  if (SAFE_METHODS.has(req.method)) return;
  const sent = req.get('x-csrf-token');
  if (!sent || !digestsEqual(hashSecret(sent), hashSecret(session.csrfToken))) {
    throw new ForbiddenError(
      'Missing or wrong X-CSRF-Token header: send the csrf_token of GET /api/auth/session with cookie-authenticated writes.',
    );
  }
}

/** Express adapter: 401 without a valid session cookie, 403 on a write without the CSRF header. */
export function requireSession(sessions: SessionService, https: boolean) {
  const names = cookieNames(https);
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const token = readCookie(req.get('cookie'), names.session);
    if (!token) throw new AuthError('Not signed in.');
    const session = await sessions.authenticate(token);
    checkCsrf(req, session);
    req.accountSession = session;
    req.actingAccountId = session.accountId;
    next();
  };
}

/**
 * A signed-in account by either credential: `Authorization: Bearer plz_…` (an account API key,
 * for programs) or the session cookie with its CSRF header (browsers).
 */
export function requireAccountActor(deps: { sessions: SessionService; accounts: AccountService; https: boolean }) {
  const cookie = requireSession(deps.sessions, deps.https);
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const authorization = req.get('authorization');
    if (authorization !== undefined) {
      const principal = await deps.accounts.authenticateApiKey(bearerToken(authorization));
      req.actingAccountId = principal.accountId;
      next();
      return;
    }
    await cookie(req, res, next);
  };
}
