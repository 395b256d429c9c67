import type { NextFunction, Request, Response } from 'express';

import { type AccountService, bearerToken } from '../accounts/index.ts';

/**
 * Express adapter: the account of an `Authorization: Bearer plz_…` API key as
 * `req.actingAccountId`. `required`: 401 without one; otherwise a request without an
 * Authorization header goes on anonymously, and one with a bad key is still a 401 (a caller who
 * meant to act for an account must not silently act for nobody). No session cookie: these routes
 * take writes from programs, and a cookie would need the CSRF dance for nothing.
 */
export function accountApiKey(accounts: AccountService, options: { required: boolean }) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const authorization = req.get('authorization');
    if (authorization !== undefined || options.required) {
      req.actingAccountId = (await accounts.authenticateApiKey(bearerToken(authorization))).accountId;
    }
    next();
  };
}
