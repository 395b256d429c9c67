import type { NextFunction, Request, Response } from 'express';

import { type BearerVerifier, type Principal, requireScope } from '../tokens/index.ts';

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
