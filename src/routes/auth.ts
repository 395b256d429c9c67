import type { NextFunction, Request, Response } from 'express';

import { type AccountService, type ApiKeyPrincipal, bearerToken } from '../accounts/index.ts';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by requireApiKey: the account the request acts for. */
    principal?: ApiKeyPrincipal;
  }
}

/** Express adapter over the framework-free API-key check: 401 unless a valid account key is sent. */
export function requireApiKey(accounts: AccountService) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    req.principal = await accounts.authenticateApiKey(bearerToken(req.get('authorization')));
    next();
  };
}
