import type { NextFunction, Request, Response } from 'express';
import { Router } from 'express';
import type { Redis } from 'ioredis';

import { ForbiddenError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import type { PolicyService } from '../policy/index.ts';
import { createRateLimiter, enforceRateLimit } from '../rate-limit/index.ts';
import type { BearerVerifier } from '../tokens/index.ts';
import { checkBearerOrSession, type SessionFallback } from './bearer-auth.ts';

/** What the policy routes are built from. */
export interface AgentPolicyRouteDeps {
  policies: PolicyService;
  verify: BearerVerifier;
  session?: SessionFallback;
  /** Policy writes per account per minute (the agents' write budget). */
  writesPerMinute: number;
  redis: Redis | undefined;
  keyPrefix: string;
  log: Logger;
}

/**
 * `GET/PUT/DELETE /api/agents/:id/policy` and `GET/PUT /api/account/agent-policy` (issue 35): an
 * account API key, or the signed-in session with its CSRF header (the Account page); reads need
 * `agents:read`, writes `agents:write` and count against the account's write budget. Answers and
 * errors in the token-API shape, as `/api/agents`.
 */
export function agentPolicyRoutes(deps: AgentPolicyRouteDeps): Router {
  const router = Router();
  const read = checkBearerOrSession(deps.verify, deps.session, 'agents:read');
  const check = checkBearerOrSession(deps.verify, deps.session, 'agents:write');
  const limiter = createRateLimiter({
    policy: { name: 'agent-policy', limit: deps.writesPerMinute, windowSeconds: 60 },
    redis: deps.redis,
    keyPrefix: deps.keyPrefix,
    log: deps.log,
  });
  const reading = async (req: Request, _res: Response, next: NextFunction) => {
    await read(req);
    // A guest may list public agents, but holds no agent whose policy it could read.
    if (req.bearer!.kind !== 'account')
      throw new ForbiddenError('A guest token cannot do this; use an account API key.');
    next();
  };
  const writing = async (req: Request, res: Response, next: NextFunction) => {
    await check(req);
    await enforceRateLimit(limiter, req.bearer!.subject, res);
    next();
  };
  const answer = (res: Response, message: string, data: object) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ success: true, code: 'SUCCESS', message, data });
  };
  const agentId = (req: Request) => String(req.params['id']);

  router.get('/api/agents/:id/policy', reading, async (req, res) => {
    answer(res, 'Agent policy.', await deps.policies.agentPolicy(req.bearer!.subject, agentId(req)));
  });
  router.put('/api/agents/:id/policy', writing, async (req, res) => {
    const view = await deps.policies.setAgentPolicy(req.bearer!.subject, agentId(req), req.body);
    answer(res, 'Agent policy saved: effective on every instance within 5 s.', view);
  });
  router.delete('/api/agents/:id/policy', writing, async (req, res) => {
    const view = await deps.policies.removeAgentPolicy(req.bearer!.subject, agentId(req));
    answer(res, "Agent policy removed: the account's default applies (on every instance within 5 s).", view);
  });
  router.get('/api/account/agent-policy', reading, async (req, res) => {
    answer(
      res,
      "The account's default agent policy and ceiling.",
      await deps.policies.accountPolicy(req.bearer!.subject),
    );
  });
  router.put('/api/account/agent-policy', writing, async (req, res) => {
    const view = await deps.policies.setAccountPolicy(req.bearer!.subject, req.body);
    answer(res, "The account's default agent policy and ceiling saved: effective on every instance within 5 s.", view);
  });
  return router;
}
