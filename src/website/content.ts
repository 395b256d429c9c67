import { z } from 'zod';

import { type Locale, LOCALES, PlanSchema, SCENARIO_IDS, type ScenarioId } from './schemas.ts';

const Text = z.string().trim().min(1);
const Slug = z.string().regex(/^[a-z0-9][a-z0-9-]*$/);

const ContentFileSchema = z.strictObject({
  locale: z.enum(LOCALES),
  products: z.array(z.strictObject({ id: Slug, name: Text, tag: Text, body: Text, cta: Text })).min(1),
  scenarios: z
    .array(
      z.strictObject({
        id: z.enum(SCENARIO_IDS),
        name: Text,
        headline: Text,
        description: Text,
        products: z.array(Slug).min(1),
        planId: Slug,
        keywords: z.array(Text).min(1),
      }),
    )
    .length(SCENARIO_IDS.length),
  defaultScenario: z.enum(SCENARIO_IDS),
  plans: z.array(PlanSchema.strict()).min(1),
  manifesto: Text,
  text: z.strictObject({
    answer: Text,
    fallbackAnswer: Text,
    leadNextStep: Text,
    quoteOpen: z.string(),
    quoteClose: z.string(),
  }),
});

/** One locale's content file as validated. */
export type ContentFile = z.infer<typeof ContentFileSchema>;
/** A plan as served. */
export type Plan = ContentFile['plans'][number];

/** A scenario with its products and plan resolved, for recommendations. */
export interface ScenarioDetail {
  id: ScenarioId;
  name: string;
  headline: string;
  description: string;
  productNames: string[];
  plan: Plan;
}

/** Everything one locale serves. */
export interface LocaleCatalog {
  locale: Locale;
  /** Products in display order; `id` is internal (config/content), not served by `/api/products`. */
  products: { id: string; name: string; tag: string; body: string; cta: string }[];
  scenarios: { id: ScenarioId; name: string; headline: string; products: string[]; planId: string }[];
  plans: Plan[];
  manifesto: string;
  text: ContentFile['text'];
  scenario(id: ScenarioId): ScenarioDetail;
}

/** The website's content in every locale, validated and cross-checked. */
export interface WebsiteContent {
  readonly locales: readonly Locale[];
  readonly defaultScenario: ScenarioId;
  /** The validated files, for building the intent classifier's vocabulary. */
  readonly files: readonly ContentFile[];
  catalog(locale: Locale): LocaleCatalog;
}

/** The content is unusable; the message says which file and what. */
export class ContentError extends Error {
  constructor(message: string) {
    super(`Invalid website content: ${message}`);
    this.name = 'ContentError';
  }
}

/**
 * Validates the content of every locale (`sources`: locale tag → parsed JSON) and resolves
 * `{base_url}` in plan URLs. Throws ContentError at start-up when a file is malformed, a locale is
 * missing, a reference dangles, or locales disagree on ids, product links or plans.
 */
export function loadWebsiteContent(options: {
  sources: Readonly<Record<string, unknown>>;
  baseUrl: string;
}): WebsiteContent {
  const files = LOCALES.map((locale) => parseFile(locale, options.sources[locale], options.baseUrl));
  const [reference, ...others] = files as [ContentFile, ...ContentFile[]];
  for (const other of others) checkSameShape(reference, other);
  const catalogs = new Map(files.map((file) => [file.locale, buildCatalog(file)]));
  return {
    locales: LOCALES,
    defaultScenario: reference.defaultScenario,
    files,
    catalog: (locale) => catalogs.get(locale)!,
  };
}

function parseFile(locale: Locale, raw: unknown, baseUrl: string): ContentFile {
  if (raw === undefined) throw new ContentError(`no content for locale ${locale}`);
  const parsed = ContentFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ContentError(`${locale}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  const file = parsed.data;
  if (file.locale !== locale) throw new ContentError(`${locale}: the file says locale ${file.locale}`);
  const productIds = new Set(file.products.map((p) => p.id));
  const planIds = new Set(file.plans.map((p) => p.id));
  if (new Set(file.scenarios.map((s) => s.id)).size !== SCENARIO_IDS.length)
    throw new ContentError(`${locale}: scenarios must be ${SCENARIO_IDS.join(', ')}`);
  for (const scenario of file.scenarios) {
    for (const product of scenario.products) {
      if (!productIds.has(product))
        throw new ContentError(`${locale}: scenario ${scenario.id} names unknown product ${product}`);
    }
    if (!planIds.has(scenario.planId))
      throw new ContentError(`${locale}: scenario ${scenario.id} names unknown plan ${scenario.planId}`);
  }
  return {
    ...file,
    plans: file.plans.map((plan) => ({ ...plan, checkoutUrl: plan.checkoutUrl.replaceAll('{base_url}', baseUrl) })),
  };
}

function checkSameShape(a: ContentFile, b: ContentFile): void {
  const shape = (f: ContentFile) =>
    JSON.stringify({
      products: f.products.map((p) => p.id),
      scenarios: f.scenarios.map((s) => [s.id, s.products, s.planId]),
      plans: f.plans.map((p) => [p.id, p.action]),
      defaultScenario: f.defaultScenario,
    });
  if (shape(a) !== shape(b))
    throw new ContentError(`${b.locale} and ${a.locale} differ in product, scenario or plan ids and links`);
}

function buildCatalog(file: ContentFile): LocaleCatalog {
  const productName = new Map(file.products.map((p) => [p.id, p.name]));
  const plan = new Map(file.plans.map((p) => [p.id, p]));
  const details = new Map<ScenarioId, ScenarioDetail>(
    file.scenarios.map((s) => [
      s.id,
      {
        id: s.id,
        name: s.name,
        headline: s.headline,
        description: s.description,
        productNames: s.products.map((id) => productName.get(id)!),
        plan: plan.get(s.planId)!,
      },
    ]),
  );
  return {
    locale: file.locale,
    products: file.products.map(({ id, name, tag, body, cta }) => ({ id, name, tag, body, cta })),
    scenarios: file.scenarios.map((s) => ({
      id: s.id,
      name: s.name,
      headline: s.headline,
      products: details.get(s.id)!.productNames,
      planId: s.planId,
    })),
    plans: file.plans,
    manifesto: file.manifesto,
    text: file.text,
    scenario: (id) => details.get(id)!,
  };
}
