/**
 * The public website API (spec §4.6): catalog content per locale, locale negotiation, the intent
 * classifier, lead capture, the routes and their OpenAPI contract.
 */
export { websiteBodyErrors } from './body-errors.ts';
export type { ContentFile, LocaleCatalog, Plan, ScenarioDetail, WebsiteContent } from './content.ts';
export { ContentError, loadWebsiteContent } from './content.ts';
export { websiteOpenApiOptions } from './contract.ts';
export { createWebsite } from './create-website.ts';
export type { IntentClassification, IntentIndex } from './intent-classifier.ts';
export { buildIntentIndex, classifyIntent } from './intent-classifier.ts';
export type { Lead, LeadService } from './leads.ts';
export { createLeadService, LEAD_DEDUPE_WINDOW_MS } from './leads.ts';
export { FALLBACK_LOCALE, LOCALE_COOKIE, matchLocale, negotiateLocale, visitorLocale } from './locale.ts';
export { fillTemplate, INTENT_NEXT_ACTIONS, LEAD_NEXT_ACTIONS, recommendation } from './recommend.ts';
export type { WebsiteRouteDeps } from './routes.ts';
export { websiteRoutes } from './routes.ts';
export type { LeadRequest, Locale, ScenarioId } from './schemas.ts';
export { LOCALES, PROMPT_MAX_CHARS, SCENARIO_IDS } from './schemas.ts';
