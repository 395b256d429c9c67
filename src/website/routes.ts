import { createHash } from 'node:crypto';

import { type Request, type Response, Router } from 'express';

import { rateLimit, type RateLimiter } from '../rate-limit/index.ts';
import type { LocaleCatalog, WebsiteContent } from './content.ts';
import { classifyIntent, type IntentIndex } from './intent-classifier.ts';
import type { LeadService } from './leads.ts';
import { negotiateLocale } from './locale.ts';
import { fillTemplate, LEAD_NEXT_ACTIONS, recommendation } from './recommend.ts';
import { IntentRequestSchema, LeadRequestSchema, type Locale } from './schemas.ts';
import { parseBody } from './validation.ts';

/** What the website routes are built from (see createWebsite). */
export interface WebsiteRouteDeps {
  content: WebsiteContent;
  intentIndex: IntentIndex;
  leads: LeadService;
  limits: { intent: RateLimiter; leads: RateLimiter };
  /** Take the client address from X-Forwarded-For (PLAZA_TRUST_PROXY). */
  trustProxy: boolean;
}

type CatalogResource = 'products' | 'scenarios' | 'plans' | 'manifesto';
const CATALOG_CACHE_CONTROL = 'public, max-age=300';
const HAS_HAN = /\p{Script=Han}/u;

function requestLocale(req: Request, hint?: Locale): Locale {
  return negotiateLocale({ query: req.query['locale'], acceptLanguage: req.get('accept-language'), hint });
}

/**
 * RFC 9110 §13.1.2 (weak comparison). Evaluated here rather than through Express's `req.fresh`,
 * which ignores If-None-Match whenever the request says `Cache-Control: no-cache`, as fetch() adds
 * to every conditional request.
 */
function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** Catalog bodies and their content ETags, computed once per locale (request_id is not part of them). */
function precompute(content: WebsiteContent) {
  const table = new Map<string, { body: Record<string, unknown>; etag: string; json: string }>();
  for (const locale of content.locales) {
    const catalog: LocaleCatalog = content.catalog(locale);
    const bodies: Record<CatalogResource, Record<string, unknown>> = {
      // The §2.11 fields only: a product's id stays internal (decision: website catalog records).
      products: { products: catalog.products.map(({ name, tag, body, cta }) => ({ name, tag, body, cta })), locale },
      scenarios: { scenarios: catalog.scenarios, locale },
      plans: { plans: catalog.plans, locale },
      manifesto: { manifesto: catalog.manifesto, locale },
    };
    for (const [resource, body] of Object.entries(bodies)) {
      const etag = `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"`;
      // Serialised once: every answer is this text with its request_id appended.
      const text = JSON.stringify(body);
      table.set(`${resource}:${locale}`, { body, etag, json: `${text.slice(0, -1)},"request_id":` });
    }
  }
  return table;
}

/**
 * The public website API (spec §4.6): cacheable catalog GETs in the negotiated locale, intent
 * recommendation and lead capture behind per-client rate limits. Anonymous: no route reads
 * `Authorization`.
 */
export function websiteRoutes(deps: WebsiteRouteDeps): Router {
  const { content, intentIndex, leads, limits, trustProxy } = deps;
  const catalogs = precompute(content);
  const router = Router();

  // The hottest public GETs: headers and body written directly (the body serialised once per
  // locale; ETag/304 handled here), without res.send's content-type lookup and freshness pass.
  const sendCatalog = (resource: CatalogResource) => (req: Request, res: Response) => {
    const locale = requestLocale(req);
    const entry = catalogs.get(`${resource}:${locale}`)!;
    const headers = {
      ETag: entry.etag,
      'Cache-Control': CATALOG_CACHE_CONTROL,
      'Content-Language': locale,
      Vary: 'Accept-Language',
    };
    if (ifNoneMatchHits(req.headers['if-none-match'], entry.etag)) {
      res.writeHead(304, headers).end();
      return;
    }
    const body = `${entry.json}${JSON.stringify(req.requestId)}}`;
    res
      .writeHead(200, {
        ...headers,
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      })
      .end(body);
  };

  router.get('/api/products', sendCatalog('products'));
  router.get('/api/scenarios', sendCatalog('scenarios'));
  router.get('/api/plans', sendCatalog('plans'));
  router.get('/api/manifesto', sendCatalog('manifesto'));

  router.post('/api/agent/intent', rateLimit(limits.intent, { trustProxy }), (req, res) => {
    // Without a supported language preference, a Chinese prompt is answered in Chinese, and
    // refused in Chinese too (one too long, say).
    const sent = (req.body as { prompt?: unknown } | null | undefined)?.prompt;
    const locale = requestLocale(req, typeof sent === 'string' && HAS_HAN.test(sent) ? 'zh-CN' : undefined);
    const { prompt } = parseBody(IntentRequestSchema, req.body, 'invalid_prompt', locale);
    const classification = classifyIntent(intentIndex, prompt);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Language', locale);
    res.json(recommendation(content.catalog(locale), classification));
  });

  router.post('/api/leads', rateLimit(limits.leads, { trustProxy }), async (req, res) => {
    const input = parseBody(LeadRequestSchema, req.body, 'invalid_lead', requestLocale(req));
    const locale = requestLocale(req);
    const { lead } = await leads.submit(input, locale);
    const catalog = content.catalog(locale);
    const scenario = catalog.scenario(lead.scenario);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Language', locale);
    // The same answer whether or not a row was written: a stranger must not learn that an
    // address already sent a lead (leads.ts).
    res.status(201).json({
      status: 'received',
      scenario: { id: scenario.id, headline: scenario.headline },
      recommendedProducts: scenario.productNames,
      planName: scenario.plan.name,
      nextStep: fillTemplate(catalog.text.leadNextStep, { email: lead.email, scenario: scenario.name }),
      nextActions: [...LEAD_NEXT_ACTIONS],
    });
  });
  return router;
}
