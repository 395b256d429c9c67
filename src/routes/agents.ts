import { Router } from 'express';

import type { AgentService } from '../agents/index.ts';
import type { BearerVerifier } from '../tokens/index.ts';
import { requireBearer } from './bearer-auth.ts';

/**
 * `POST /api/agents` (account API key) creates an agent and returns its gateway credential once;
 * `POST /api/agents/:id/revoke` revokes it. `GET /api/agents` lives with the token API.
 */
export function agentRoutes(deps: { agents: AgentService; verify: BearerVerifier }): Router {
  const router = Router();
  router.post('/api/agents', requireBearer(deps.verify, 'agents:write'), async (req, res) => {
    const { agent, token } = await deps.agents.create(req.bearer!.subject, req.body);
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ success: true, code: 'CREATED', message: 'Agent created; store its token now, it is not shown again.', data: { agent, token } });
  });
  router.post('/api/agents/:id/revoke', requireBearer(deps.verify, 'agents:write'), async (req, res) => {
    const agent = await deps.agents.revoke(req.bearer!.subject, String(req.params['id']));
    res.json({ success: true, code: 'SUCCESS', message: 'Agent revoked.', data: { agent } });
  });
  return router;
}
