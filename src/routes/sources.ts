import { createHash } from 'node:crypto';

import type { NextFunction, Request, Response } from 'express';
import { Router } from 'express';
import { z } from 'zod';

import type { AccountService, SessionService } from '../accounts/index.ts';
import { parseOrThrow } from '../marketplace/index.ts';
import { enforceRateLimit, rateLimit, type RateLimiter } from '../rate-limit/index.ts';
import {
  parseSourceBody,
  registrationLimitKey,
  renderEvent,
  renderShareEntry,
  renderSource,
  SOURCE_STATUSES,
  type SourceService,
  type SourceTrust,
} from '../sources/index.ts';
import { requireAccountActor } from './session-auth.ts';

// PostgreSQL refuses a NUL in a query parameter (it answered 500).
const noNul = (v: string) => !v.includes('\u0000');
const ListQuerySchema = z.strictObject({
  status: z.enum(SOURCE_STATUSES).optional(),
  trust: z.enum(['risky-unknown', 'known-user']).optional(),
  risk: z.enum(['none', 'low', 'medium', 'high']).optional(),
  package_id: z.string().min(1).max(128).refine(noNul, 'must not contain NUL characters').optional(),
  q: z.string().max(200, 'must be at most 200 characters').refine(noNul, 'must not contain NUL characters').optional(),
  limit: z.coerce
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(100, 'must be at most 100')
    .default(20),
  cursor: z.string().min(1).max(512).optional(),
  mine: z.enum(['1', 'true']).optional(),
});
const ShareQuerySchema = z.strictObject({
  q: z.string().max(200, 'must be at most 200 characters').refine(noNul, 'must not contain NUL characters').optional(),
});

/** What the source routes are built from. */
export interface SourceRouteDeps {
  sources: SourceService;
  accounts: AccountService;
  sessions: SessionService;
  https: boolean;
  allowPrivateTargets: boolean;
  trustProxy: boolean;
  /**
   * PLAZA_RATE_LIMIT_SOURCES_PER_MIN: registrations per client address, and per account for a
   * known user's; the same limiter the `agpk.source.register` MCP tool counts in.
   */
  limiter: RateLimiter;
}

/**
 * The package source registry (spec §4.3): anonymous registration (risky-unknown), registration
 * by a signed-in user (known in-site user), the list view, one source with its history, and the
 * live discovery list under /share/v1.
 */
export function sourceRoutes(deps: SourceRouteDeps): Router {
  const { sources } = deps;
  const router = Router();
  const limited = rateLimit(deps.limiter, { trustProxy: deps.trustProxy });
  const actor = requireAccountActor({ sessions: deps.sessions, accounts: deps.accounts, https: deps.https });
  // A known user's registrations also count against the account, under the key the MCP tool uses:
  // alternating between this route and the tool does not double the budget.
  const perAccount = async (req: Request, res: Response, next: NextFunction) => {
    await enforceRateLimit(deps.limiter, registrationLimitKey(req.actingAccountId!), res);
    next();
  };

  const register = async (req: Request, res: Response, trust: SourceTrust, accountId: string | null) => {
    const body = parseSourceBody(req.body, deps.allowPrivateTargets);
    const { source, created } = await sources.register(body, { trust, accountId });
    res.setHeader('Location', `/api/agpk/sources/${source.id}`);
    res
      .status(created ? 202 : 200)
      .json({ source: renderSource(source), status: source.status, created, request_id: req.requestId });
  };

  router.post('/api/agpk/sources', limited, (req, res) => register(req, res, 'risky-unknown', null));
  router.post('/api/agpk/sources/tool', limited, actor, perAccount, (req, res) =>
    register(req, res, 'known-user', req.actingAccountId!),
  );

  // `?mine=1` (a signed-in user's own registrations) needs the session or an API key; the rest is public.
  const actorIfMine = (req: Request, res: Response, next: (error?: unknown) => void) =>
    req.query['mine'] === undefined ? next() : actor(req, res, next);
  router.get('/api/agpk/sources', actorIfMine, async (req, res) => {
    const query = parseOrThrow(ListQuerySchema, req.query, 'query');
    const filter = {
      status: query.status,
      trust: query.trust,
      risk: query.risk,
      packageId: query.package_id,
      q: query.q,
      accountId: query.mine ? req.actingAccountId : undefined,
    };
    const page = await sources.list(filter, query.limit, query.cursor);
    res.json({
      sources: page.items.map(renderSource),
      count: page.items.length,
      next_cursor: page.nextCursor,
      request_id: req.requestId,
    });
  });

  router.get('/api/agpk/sources/:id', async (req, res) => {
    const { source, events } = await sources.get(String(req.params['id']));
    res.json({ source: { ...renderSource(source), events: events.map(renderEvent) }, request_id: req.requestId });
  });

  router.get('/share/v1/agpk/sources', async (req, res) => {
    const query = parseOrThrow(ShareQuerySchema, req.query, 'query');
    const entries = (await sources.live(query.q)).map(renderShareEntry);
    // The ETag covers the list only (every JSON body also carries its own request_id), so it stays
    // the same while the list does and If-None-Match answers 304.
    const etag = `"${createHash('sha256').update(JSON.stringify(entries)).digest('base64url').slice(0, 32)}"`;
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'public, max-age=30');
    const ifNoneMatch = req.get('if-none-match');
    if (
      ifNoneMatch !== undefined &&
      (ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))
    ) {
      res.status(304).end();
      return;
    }
    res.json({ sources: entries, count: entries.length });
  });

  return router;
}
