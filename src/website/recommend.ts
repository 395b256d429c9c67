import type { LocaleCatalog } from './content.ts';
import type { IntentClassification } from './intent-classifier.ts';

/** Where a visitor goes after a recommendation: leave a lead, or compare plans. */
export const INTENT_NEXT_ACTIONS = ['/api/leads', '/api/plans', '/api/scenarios'] as const;
/** Where a visitor goes after leaving a lead. */
export const LEAD_NEXT_ACTIONS = ['/api/plans', '/api/products'] as const;

/** Fills `{name}` placeholders; unknown names stay as written. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([a-z_]+)\}/g, (whole, name: string) => values[name] ?? whole);
}

function list(locale: string, items: string[]): string {
  return new Intl.ListFormat(locale, { style: 'long', type: 'conjunction' }).format(items);
}

/** The §2.12 recommendation (without request_id) for a classified prompt, in `catalog`'s locale. */
export function recommendation(catalog: LocaleCatalog, classification: IntentClassification) {
  const scenario = catalog.scenario(classification.scenarioId);
  const { text } = catalog;
  const answer = fillTemplate(classification.matched ? text.answer : text.fallbackAnswer, {
    scenario: scenario.name,
    headline: scenario.headline,
    products: list(catalog.locale, scenario.productNames),
    plan: scenario.plan.name,
    terms: list(
      catalog.locale,
      classification.terms.map((t) => `${text.quoteOpen}${t}${text.quoteClose}`),
    ),
  });
  return {
    status: classification.matched ? ('ok' as const) : ('fallback' as const),
    locale: catalog.locale,
    answer,
    scenario: { id: scenario.id, name: scenario.name, headline: scenario.headline },
    recommendedProducts: scenario.productNames,
    planId: scenario.plan.id,
    planName: scenario.plan.name,
    nextActions: [...INTENT_NEXT_ACTIONS],
  };
}
