/**
 * The public website's HTTP contract (spec §2.11–2.14, §4.6, §7) as zod schemas: requests are
 * validated with them and `/openapi.json` is generated from them, so the two cannot disagree.
 */
import { z } from 'zod';

/** Locales the website serves; `en` is the fallback. */
export const LOCALES = ['en', 'zh-CN'] as const;
/** A supported locale tag. */
export type Locale = (typeof LOCALES)[number];
/** The four scenarios of spec §4.6. */
export const SCENARIO_IDS = ['enterprise', 'commerce', 'developer', 'growth'] as const;
/** A scenario id. */
export type ScenarioId = (typeof SCENARIO_IDS)[number];
/** Longest accepted intent prompt, in characters. */
export const PROMPT_MAX_CHARS = 2000;

export const LocaleSchema = z.enum(LOCALES).describe('The locale the answer is written in.');
const RequestIdSchema = z.string().describe('The request id, also sent as X-Request-Id; quote it to support.');

/** §2.11 product record. */
export const ProductSchema = z.object({
  name: z.string(),
  tag: z.string(),
  body: z.string(),
  cta: z.string().describe('Call-to-action label.'),
});

/** §2.11 scenario record. */
export const ScenarioSchema = z.object({
  id: z.enum(SCENARIO_IDS),
  name: z.string(),
  headline: z.string(),
  products: z.array(z.string()).describe('Names of the products this scenario uses, as in /api/products.'),
  planId: z.string().describe('Id of the recommended plan in /api/plans.'),
});

/** What a plan's button does. */
export const PLAN_ACTIONS = ['start_free', 'checkout', 'contact_sales'] as const;

/** §2.11 plan record. */
export const PlanSchema = z.object({
  id: z.string(),
  name: z.string(),
  priceCents: z
    .number()
    .int()
    .min(0)
    .describe('Monthly price in the smallest currency unit (for Enterprise: the starting price).'),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .describe('ISO 4217 currency code.'),
  features: z.array(z.string()),
  action: z.enum(PLAN_ACTIONS),
  checkoutUrl: z
    .string()
    .describe('Where the plan button leads (sign-up, checkout or sales contact); a lead never opens a paid plan.'),
});

export const ProductsResponseSchema = z.object({
  products: z.array(ProductSchema),
  locale: LocaleSchema,
  request_id: RequestIdSchema,
});
export const ScenariosResponseSchema = z.object({
  scenarios: z.array(ScenarioSchema),
  locale: LocaleSchema,
  request_id: RequestIdSchema,
});
export const PlansResponseSchema = z.object({
  plans: z.array(PlanSchema),
  locale: LocaleSchema,
  request_id: RequestIdSchema,
});
export const ManifestoResponseSchema = z.object({
  manifesto: z.string().describe('Plain text; paragraphs separated by blank lines.'),
  locale: LocaleSchema,
  request_id: RequestIdSchema,
});

// A lone surrogate cannot be stored as sent (UTF-8 has no encoding for it): refused, not altered.
/** Refusal of text with a lone surrogate (worded per locale in validation.ts). */
export const WELL_FORMED = 'must be well-formed Unicode (a lone surrogate is not)';
/** Refusal of a prompt of whitespace only. */
export const BLANK_PROMPT = 'prompt must not be blank';
const wellFormedText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => value.isWellFormed(), WELL_FORMED);
const optionalText = (max: number) => wellFormedText(max).nullable().optional();

/** §4.6 intent request. */
export const IntentRequestSchema = z.strictObject({
  prompt: z
    .string()
    .min(1)
    .max(PROMPT_MAX_CHARS)
    .regex(/\S/, BLANK_PROMPT)
    .refine((value) => value.isWellFormed(), WELL_FORMED)
    .describe(
      `What the visitor wants to achieve, in any language; 1 to ${PROMPT_MAX_CHARS} characters, not only whitespace.`,
    ),
});

/** §2.12 intent recommendation. */
export const IntentResponseSchema = z.object({
  status: z
    .enum(['ok', 'fallback'])
    .describe('`ok`: the prompt matched a scenario; `fallback`: no signal, the default scenario is suggested.'),
  locale: LocaleSchema,
  answer: z.string().describe('A short explanation of the recommendation.'),
  scenario: z.object({ id: z.enum(SCENARIO_IDS), name: z.string(), headline: z.string() }),
  recommendedProducts: z.array(z.string()),
  planId: z.string(),
  planName: z.string(),
  nextActions: z.array(z.string()).describe('API paths to continue with.'),
  request_id: RequestIdSchema,
});

/** §4.6 lead body (strict: unknown fields are rejected). */
export const LeadRequestSchema = z.strictObject({
  email: z.email().max(254).describe('Work e-mail address.'),
  scenario: z.enum(SCENARIO_IDS),
  company: optionalText(200),
  painPoint: optionalText(2000),
  currentTools: optionalText(1000),
  desiredAutomation: optionalText(2000),
  teamSize: optionalText(50),
});
/** A validated lead body. */
export type LeadRequest = z.infer<typeof LeadRequestSchema>;

/** §2.13 lead answer. */
export const LeadResponseSchema = z.object({
  status: z
    .enum(['received'])
    .describe('Always `received`: the answer does not say whether this e-mail sent a lead before.'),
  scenario: z.object({ id: z.enum(SCENARIO_IDS), headline: z.string() }),
  recommendedProducts: z.array(z.string()),
  planName: z.string(),
  nextStep: z.string(),
  nextActions: z.array(z.string()),
  request_id: RequestIdSchema,
});

/** §2.14 health answer. */
export const HealthResponseSchema = z.object({
  status: z.enum(['ok', 'unavailable']),
  service: z.string(),
  request_id: RequestIdSchema,
  shared_envelope: z.object({
    success: z.boolean(),
    code: z.string(),
    message: z.string(),
    data: z.object({ status: z.enum(['ok', 'unavailable']), service: z.string() }),
  }),
});

/** One field-level problem in a rejected body. */
export const IssueSchema = z.object({ path: z.string(), message: z.string() });

/** §7 website error body. */
export const WebsiteErrorSchema = z.object({
  success: z.literal(false),
  code: z.string().describe('invalid_prompt, invalid_lead, rate_limited, not_found, … or internal (5xx).'),
  message: z.string(),
  request_id: RequestIdSchema,
  details: z.array(IssueSchema).optional(),
});
