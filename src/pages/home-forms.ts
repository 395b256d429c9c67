import type { Request } from 'express';
import { z } from 'zod';

import { clientAddress } from '../rate-limit/index.ts';
import {
  classifyIntent,
  type Locale,
  PROMPT_MAX_CHARS,
  recommendation,
  SCENARIO_IDS,
  type WebsiteRouteDeps,
} from '../website/index.ts';
import { fill, type PageCopy } from './copy.ts';

/** What the home page shows after a form was posted without script. */
export interface HomeFormState {
  intent?: { prompt: string; error?: string; answer?: ReturnType<typeof recommendation> };
  /** `note`: said above the lead form (the plan a visitor chose with a plan button). */
  lead?: {
    values: Record<string, string>;
    errors: Record<string, string>;
    message?: string;
    kind?: 'ok' | 'warn' | 'error';
    note?: string;
  };
}

// The same limits as the JSON routes (docs/website-api.md); the JSON routes stay the contract.
const optional = (max: number) => z.string().trim().max(max).optional();
const LeadFormSchema = z.object({
  email: z.string().trim().max(254).pipe(z.email()),
  scenario: z.enum(SCENARIO_IDS),
  company: optional(200),
  painPoint: optional(2000),
  teamSize: optional(50),
});
const LEAD_FIELDS = ['email', 'scenario', 'company', 'painPoint', 'teamSize'] as const;

function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/**
 * Handles the intent box and the lead form posted as plain HTML forms (no script): the same
 * classifier, lead service and per-client limits as `POST /api/agent/intent` and `POST /api/leads`.
 * Returns what to show and the HTTP status of the page.
 */
export async function handleHomeForm(
  req: Request,
  website: WebsiteRouteDeps,
  locale: Locale,
  copy: PageCopy,
): Promise<{ state: HomeFormState; status: number }> {
  const h = copy.home;
  const client = clientAddress(req, website.trustProxy);
  if (field(req.body, 'form') === 'intent') {
    const prompt = field(req.body, 'prompt');
    if (prompt.trim() === '' || prompt.length > PROMPT_MAX_CHARS)
      return { state: { intent: { prompt, error: h.intentEmpty } }, status: 400 };
    const decision = await website.limits.intent.consume(client);
    if (!decision.allowed)
      return { state: { intent: { prompt, error: fill(h.tooMany, { seconds: decision.resetSeconds }) } }, status: 429 };
    const answer = recommendation(website.content.catalog(locale), classifyIntent(website.intentIndex, prompt));
    return { state: { intent: { prompt, answer } }, status: 200 };
  }
  const values = Object.fromEntries(LEAD_FIELDS.map((name) => [name, field(req.body, name)]));
  const parsed = LeadFormSchema.safeParse(
    Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== '')),
  );
  if (!parsed.success) {
    const errors: Record<string, string> = {};
    for (const issue of parsed.error.issues) {
      const name = String(issue.path[0] ?? '');
      errors[name] ??=
        name === 'email'
          ? h.emailInvalid
          : name === 'scenario'
            ? h.scenarioMissing
            : issue.code === 'too_big'
              ? fill(h.fieldTooLong, { max: Number(issue.maximum) })
              : h.fieldInvalid;
    }
    return { state: { lead: { values, errors } }, status: 400 };
  }
  const decision = await website.limits.leads.consume(client);
  if (!decision.allowed)
    return {
      state: {
        lead: { values, errors: {}, message: fill(h.tooMany, { seconds: decision.resetSeconds }), kind: 'warn' },
      },
      status: 429,
    };
  // One answer whether or not a row was written (an address's earlier lead is nobody's business).
  await website.leads.submit(parsed.data, locale);
  return { state: { lead: { values: {}, errors: {}, message: h.leadReceived, kind: 'ok' } }, status: 200 };
}
