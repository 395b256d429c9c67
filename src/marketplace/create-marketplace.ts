import {
  createDemandRecorder,
  createProber,
  DISCOVERY_LEASE,
  type HostBudget,
  type ProbeLog,
  type Prober,
  type ProbeStore,
  type Resolver,
} from '../../probes/index.ts';
import type { Database } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import { createDiscoveryStore } from './discovery-store.ts';
import { createEndpointRepository } from './endpoint-repository.ts';
import { createListingService, type ListingService } from './listing-service.ts';
import { createProbeStore } from './probe-store.ts';
import { createToolSearchIndex } from './search-index.ts';
import { createToolRepository } from './tool-repository.ts';

/** Settings the marketplace reads from the configuration. */
export interface MarketplaceSettings {
  probeBaseIntervalS: number;
  allowPrivateTargets: boolean;
}

/** Dependencies of createMarketplace. */
export interface MarketplaceDeps {
  db: Database;
  clock: Clock;
  log: ProbeLog;
  settings: MarketplaceSettings;
  /** DNS for the SSRF guard (tests inject one). */
  resolve?: Resolver;
  /** The per-host probe bound (createProbeHostBudget); unbounded when not given. */
  hostBudget?: HostBudget;
}

/** The marketplace as the HTTP layer and the gateway use it. */
export interface Marketplace {
  service: ListingService;
  /** The prober behind "probe at once" for new listings. */
  prober: Prober;
  /** Probe storage that also brings this instance's tool search up to date at once (for the probe loop). */
  probeStore: ProbeStore;
  /** The per-host probe bound this marketplace's prober counts in; the probe loop must count in it too. */
  hostBudget: HostBudget | undefined;
  /** Feeds demand (e.g. gateway calls) into the probe scheduler; cheap, batched, never throws. */
  recordDemand(endpointId: string, weight?: number): void;
  /**
   * Probes an endpoint again now because it said its tool list changed (at most once per 30 s
   * per endpoint on this instance: the notification comes from the provider, who could repeat it
   * at will). Never throws.
   */
  refreshTools(endpointId: string): void;
  /** Finishes background probes and pending demand writes. */
  close(): Promise<void>;
}

const UNMET_SEARCH_THROTTLE_MS = 10_000;
const TOOLS_CHANGED_THROTTLE_MS = 30_000;

/**
 * Builds the marketplace over the database: repositories, the listing service, a prober for
 * immediate probes of new listings, the demand recorder, and the unmet-search signal that pulls
 * the registry sooner (shared with every instance through the discovery lease row).
 */
export function createMarketplace(deps: MarketplaceDeps): Marketplace {
  const { db, clock, log, settings } = deps;
  const searchIndex = createToolSearchIndex(db);
  const store = createProbeStore(db.prisma);
  // Probes made here reach this instance's tool search at once (others catch up within 1 s).
  const probeStore: typeof store = {
    ...store,
    async recordProbe(owner, record) {
      await store.recordProbe(owner, record);
      searchIndex.markStale();
    },
  };
  const discoveryStore = createDiscoveryStore(db.prisma);
  const prober = createProber({
    store: probeStore,
    clock,
    log,
    baseIntervalS: settings.probeBaseIntervalS,
    allowPrivateTargets: settings.allowPrivateTargets,
    ...(deps.resolve ? { resolve: deps.resolve } : {}),
    ...(deps.hostBudget ? { hostBudget: deps.hostBudget } : {}),
  });
  const demand = createDemandRecorder({ store: probeStore, clock, log });
  let lastUnmet = -Infinity;
  /** When each endpoint was last probed for a tools/list_changed notification. */
  const refreshed = new Map<string, number>();
  const service = createListingService({
    endpoints: createEndpointRepository(db.prisma),
    tools: createToolRepository(db, searchIndex),
    clock,
    allowPrivateTargets: settings.allowPrivateTargets,
    probeSoon(endpointId) {
      prober
        .probeNow(endpointId)
        .catch((error: unknown) => log.warn({ err: error, endpoint_id: endpointId }, 'first probe failed to run'));
    },
    recordDemand: (endpointId) => demand.recordDemand(endpointId),
    noteUnmetSearch() {
      const now = clock.now();
      if (now - lastUnmet < UNMET_SEARCH_THROTTLE_MS) return;
      lastUnmet = now;
      discoveryStore
        .pullSooner(DISCOVERY_LEASE, now + 60_000)
        .catch((error: unknown) => log.debug({ err: error }, 'could not signal discovery'));
    },
    listingsRemoved: () => searchIndex.markStale(),
  });
  return {
    service,
    prober,
    probeStore,
    hostBudget: deps.hostBudget,
    recordDemand: (endpointId, weight) => demand.recordDemand(endpointId, weight),
    refreshTools(endpointId) {
      const now = clock.now();
      if (now - (refreshed.get(endpointId) ?? -Infinity) < TOOLS_CHANGED_THROTTLE_MS) return;
      if (refreshed.size >= 10_000)
        for (const [id, at] of refreshed) if (now - at >= TOOLS_CHANGED_THROTTLE_MS) refreshed.delete(id);
      refreshed.set(endpointId, now);
      prober
        .probeNow(endpointId)
        .catch((error: unknown) =>
          log.warn({ err: error, endpoint_id: endpointId }, 'probe after tools/list_changed failed to run'),
        );
    },
    async close() {
      await demand.close();
      await prober.close();
    },
  };
}
