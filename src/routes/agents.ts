import { Router } from 'express';

import type { AgentService } from '../agents/index.ts';
import type { BearerVerifier } from '../tokens/index.ts';
import { requireBearerOrSession, type SessionFallback } from './bearer-auth.ts';

/**
 * `POST /api/agents` creates an agent and returns its gateway credential once;
 * `POST /api/agents/:id/token` replaces a lost credential (the old one stops working);
 * `POST /api/agents/:id/revoke` revokes the agent. Each takes an account API key, or the signed-in
 * session cookie with its CSRF header (the Account page). `GET /api/agents` lives with the token API.
 */
export function agentRoutes(deps: { agents: AgentService; verify: BearerVerifier; session?: SessionFallback }): Router {
  const router = Router();
  const write = requireBearerOrSession(deps.verify, deps.session, 'agents:write');
  router.post('/api/agents', write, async (req, res) => {
    const { agent, token } = await deps.agents.create(req.bearer!.subject, req.body);
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ success: true, code: 'CREATED', message: 'Agent created; store its token now, it is not shown again.', data: { agent, token } });
  });
  router.post('/api/agents/:id/token', write, async (req, res) => {
    const { agent, token } = await deps.agents.rotateToken(req.bearer!.subject, String(req.params['id']));
    res.setHeader('Cache-Control', 'no-store');
    res.json({ success: true, code: 'SUCCESS', message: 'New token issued; the previous one no longer works. Store it now, it is not shown again.', data: { agent, token } });
  });
  router.post('/api/agents/:id/revoke', write, async (req, res) => {
    const agent = await deps.agents.revoke(req.bearer!.subject, String(req.params['id']));
    res.json({ success: true, code: 'SUCCESS', message: 'Agent revoked.', data: { agent } });
  });
  return router;
}
