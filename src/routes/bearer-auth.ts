import type { NextFunction, Request, Response } from 'express';

import type { SessionService } from '../accounts/index.ts';
import { readCookie } from '../http/index.ts';
import { ACCOUNT_SCOPES, type BearerVerifier, type Principal, requireScope } from '../tokens/index.ts';
import { checkCsrf, cookieNames } from './session-auth.ts';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by requireBearer: the guest or account a token API request acts for. */
    bearer?: Principal;
  }
}

/**
 * Express adapter over the framework-free bearer check: 401 unless a valid guest token or account
 * API key is sent; 403 when `scope` is given and the principal lacks it (e.g. a guest on an
 * account-only route).
 */
export function requireBearer(verify: BearerVerifier, scope?: string) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const principal = await verify(req.get('authorization'));
    if (scope !== undefined) requireScope(principal, scope);
    req.bearer = principal;
    next();
  };
}

/** What requireBearerOrSession needs to recognise a signed-in browser. */
export interface SessionFallback {
  sessions: SessionService;
  https: boolean;
}

/**
 * Like requireBearer, but a request without `Authorization` that carries the signed-in session
 * cookie acts for that session's account with an account key's scopes (the Account page manages
 * agents this way, so it needs no API key per browser tab). Writes need the session's
 * `X-CSRF-Token`, as on every cookie-authenticated route; a cross-site page cannot read it, and the
 * SameSite=Lax cookie is not sent on its fetches anyway. An `Authorization` header always wins.
 */
export function requireBearerOrSession(verify: BearerVerifier, fallback: SessionFallback | undefined, scope: string) {
  const check = checkBearerOrSession(verify, fallback, scope);
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    await check(req);
    next();
  };
}

/**
 * The check requireBearerOrSession makes, for a route that acts on its outcome (the agent writes
 * count a refused credential against the client address): sets `req.bearer`, or throws
 * AuthError (401) or ForbiddenError (403: a guest, a write without the session's CSRF header).
 */
export function checkBearerOrSession(
  verify: BearerVerifier,
  fallback: SessionFallback | undefined,
  scope: string,
): (req: Request) => Promise<void> {
  const cookieName = fallback ? cookieNames(fallback.https).session : '';
  return async (req) => {
    const cookie =
      fallback && req.get('authorization') === undefined ? readCookie(req.get('cookie'), cookieName) : undefined;
    if (!fallback || !cookie) {
      const principal = await verify(req.get('authorization'));
      requireScope(principal, scope);
      req.bearer = principal;
      return;
    }
    const session = await fallback.sessions.authenticate(cookie);
    checkCsrf(req, session);
    req.accountSession = session;
    req.actingAccountId = session.accountId;
    req.bearer = {
      kind: 'account',
      subject: session.accountId,
      scopes: [...ACCOUNT_SCOPES],
      credentialId: session.sessionId,
    };
  };
}
