import { Router } from 'express';

import type { AccountService } from '../accounts/index.ts';
import { NotFoundError } from '../kernel/index.ts';
import { requireApiKey } from './auth.ts';

/** `GET /api/account`: the account an API key belongs to (a cheap way to check a key). */
export function accountRoutes(deps: { accounts: AccountService }): Router {
  const router = Router();
  router.get('/api/account', requireApiKey(deps.accounts), async (req, res) => {
    const account = await deps.accounts.getAccount(req.principal!.accountId);
    if (!account) throw new NotFoundError('Account not found.');
    res.json({
      success: true,
      code: 'SUCCESS',
      data: {
        account: {
          id: account.id,
          email: account.email,
          name: account.name,
          status: account.status,
          created_at: account.createdAt.toISOString(),
        },
      },
    });
  });
  return router;
}
