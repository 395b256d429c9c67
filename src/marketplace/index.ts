/** The MCP marketplace: listings, catalog and tool search over the database (spec §1.1, §2.1–2.3, §4.2). */
export type { Marketplace, MarketplaceDeps, MarketplaceSettings } from './create-marketplace.ts';
export { createMarketplace } from './create-marketplace.ts';
export { createDiscoveryStore } from './discovery-store.ts';
export type { EndpointFilter, EndpointRepository, ListingDetails, NewListing } from './endpoint-repository.ts';
export { createEndpointRepository } from './endpoint-repository.ts';
export type { ListingBody, ListingChanges } from './listing-input.ts';
export {
  LISTING_TEXT_MAX,
  ListingBodySchema,
  ListingChangesSchema,
  parseListingChanges,
  parseOrThrow,
  PROVIDER_SLUG,
  RESERVED_PROVIDERS,
} from './listing-input.ts';
export type { Catalog, ListingService, Registration } from './listing-service.ts';
export { createListingService, ENDPOINT_STATUSES, normaliseListingUrl } from './listing-service.ts';
export { createProbeHostBudget } from './probe-host-budget.ts';
export { createProbeStore } from './probe-store.ts';
export { assertNoSecrets } from './secret-check.ts';
export type { ToolRepository } from './tool-repository.ts';
export { createToolRepository, MAX_SEARCH_OFFSET, toTsQuery } from './tool-repository.ts';
export type { Endpoint, EndpointSource, Page, ProbeRunRecord, Tool } from './types.ts';
