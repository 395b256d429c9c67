import type { NextFunction, Request, Response } from 'express';
import { Router } from 'express';
import type { Redis } from 'ioredis';

import type { AgentService } from '../agents/index.ts';
import { AuthError, ForbiddenError, NotFoundError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import type { ConnectedClients } from '../oauth/index.ts';
import { clientAddress, createRateLimiter, enforceRateLimit } from '../rate-limit/index.ts';
import type { BearerVerifier } from '../tokens/index.ts';
import { checkBearerOrSession, type SessionFallback } from './bearer-auth.ts';

/** What the agent routes are built from. */
export interface AgentRouteDeps {
  agents: AgentService;
  verify: BearerVerifier;
  session?: SessionFallback;
  /** Agent writes per account per minute, and per client address for those whose credential is refused. */
  writesPerMinute: number;
  trustProxy: boolean;
  /** Shared counters across instances when given. */
  redis: Redis | undefined;
  keyPrefix: string;
  log: Logger;
  /** The OAuth clients connected to an agent (PLAZA_OAUTH); absent, their routes are not mounted. */
  clients?: ConnectedClients | undefined;
}

/**
 * `POST /api/agents` creates an agent and returns its gateway credential once;
 * `POST /api/agents/:id/token` replaces a lost credential (the old one stops working);
 * `POST /api/agents/:id/revoke` revokes the agent. Each takes an account API key, or the signed-in
 * session cookie with its CSRF header (the Account page), and is rate limited (see
 * countedWrites). `GET /api/agents` lives with the token API.
 */
export function agentRoutes(deps: AgentRouteDeps): Router {
  const router = Router();
  const write = countedWrites(deps);
  router.post('/api/agents', write, async (req, res) => {
    const { agent, token } = await deps.agents.create(req.bearer!.subject, req.body);
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({
      success: true,
      code: 'CREATED',
      message: 'Agent created; store its token now, it is not shown again.',
      data: { agent, token },
    });
  });
  router.post('/api/agents/:id/token', write, async (req, res) => {
    const { agent, token } = await deps.agents.rotateToken(req.bearer!.subject, String(req.params['id']));
    res.setHeader('Cache-Control', 'no-store');
    res.json({
      success: true,
      code: 'SUCCESS',
      message: 'New token issued; the previous one no longer works. Store it now, it is not shown again.',
      data: { agent, token },
    });
  });
  router.post('/api/agents/:id/revoke', write, async (req, res) => {
    const agent = await deps.agents.revoke(req.bearer!.subject, String(req.params['id']));
    res.json({ success: true, code: 'SUCCESS', message: 'Agent revoked.', data: { agent } });
  });
  const clients = deps.clients;
  if (clients) {
    // The OAuth clients an agent is connected to, and "disconnect" (issue 34).
    const read = checkBearerOrSession(deps.verify, deps.session, 'agents:read');
    const ownAgent = async (accountId: string, agentId: string) => {
      if (agentId.includes('\u0000') || !(await deps.agents.list(accountId)).some((a) => a.id === agentId))
        throw new NotFoundError(`No agent ${agentId.slice(0, 64)} in this account.`);
    };
    router.get('/api/agents/:id/clients', async (req, res) => {
      await read(req);
      const agentId = String(req.params['id']);
      await ownAgent(req.bearer!.subject, agentId);
      const list = await clients.list(agentId);
      res.json({
        success: true,
        code: 'SUCCESS',
        message: `${list.length} connected ${list.length === 1 ? 'client' : 'clients'}.`,
        data: { clients: list },
      });
    });
    router.post('/api/agents/:id/clients/:grant/disconnect', write, async (req, res) => {
      const agentId = String(req.params['id']);
      await ownAgent(req.bearer!.subject, agentId);
      if (!(await clients.disconnect(agentId, String(req.params['grant']))))
        throw new NotFoundError('No such connected client of this agent.');
      deps.agents.forget(agentId);
      res.json({
        success: true,
        code: 'SUCCESS',
        message: 'Client disconnected: its tokens no longer work (on every instance within 2 s).',
        data: {},
      });
    });
  }
  return router;
}

/**
 * The writes' credential check (`agents:write`), counted: an authenticated write against its
 * account's budget, so a runaway script cannot mint agents and tokens without end while the
 * accounts behind one address (an office, a CI fleet) keep a budget each; a write whose credential
 * is refused (none, unknown, revoked, a guest's, a session's without its CSRF header) against the
 * client address, as it has no account to count against. Past either, 429 with Retry-After in the
 * token shape (the error table's, for `/api/agents`).
 */
function countedWrites(deps: AgentRouteDeps) {
  const check = checkBearerOrSession(deps.verify, deps.session, 'agents:write');
  const limiter = (name: string) =>
    createRateLimiter({
      policy: { name, limit: deps.writesPerMinute, windowSeconds: 60 },
      redis: deps.redis,
      keyPrefix: deps.keyPrefix,
      log: deps.log,
    });
  const perAccount = limiter('agents');
  const perClient = limiter('agents-refused');
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      await check(req);
    } catch (error) {
      if (error instanceof AuthError || error instanceof ForbiddenError)
        await enforceRateLimit(perClient, clientAddress(req, deps.trustProxy), res);
      throw error;
    }
    await enforceRateLimit(perAccount, req.bearer!.subject, res);
    next();
  };
}
