import type { Clock } from '../../src/kernel/index.ts';
import { randomToken } from '../../src/kernel/index.ts';
import type { ProbeLog } from '../probe-store.ts';
import { type DiscoveredServer, parseRegistryPage } from './registry-page.ts';

/** Storage discovery needs (implemented in src/marketplace over the database). */
export interface DiscoveryStore {
  /** Inserts or updates discovered listings (never touches manual ones); counts what changed. */
  upsertDiscovered(
    servers: DiscoveredServer[],
    registrant: string,
    now: number,
  ): Promise<{ created: number; updated: number }>;
  /** Deletes discovered listings of these registry names (their slugs stay retired); returns how many went. */
  removeDiscovered(registryNames: string[], now: number): Promise<number>;
  /**
   * Takes the named singleton lease when it is free and its time has come (`until` < now).
   * Released leases keep `until` = the earliest next run, so the schedule is shared by instances.
   */
  acquireLease(name: string, owner: string, now: number, leaseMs: number): Promise<boolean>;
  /** Releases the lease; no instance takes it again before `notBefore`. */
  releaseLease(name: string, owner: string, notBefore: number): Promise<void>;
  /** Brings a released lease's next run forward to `at` at the latest. */
  pullSooner(name: string, at: number): Promise<void>;
}

/** Options of createDiscovery; checked at creation. */
export interface DiscoveryOptions {
  store: DiscoveryStore;
  clock: Clock;
  log: ProbeLog;
  /** MCP_REGISTRY_URL, e.g. https://registry.modelcontextprotocol.io. */
  registryUrl: string;
  /** The fetch used for the registry (an operator-chosen host, so not SSRF-guarded). */
  fetch?: typeof globalThis.fetch;
  /** PLAZA_ALLOW_PRIVATE_TARGETS: list servers at loopback/private addresses (default false). */
  allowPrivateTargets?: boolean;
  minIntervalMs?: number;
  maxIntervalMs?: number;
  initialIntervalMs?: number;
  pageLimit?: number;
  maxPages?: number;
  requestTimeoutMs?: number;
  owner?: string;
  /** Stops a pull between pages and aborts its request (shutdown). */
  signal?: AbortSignal;
}

/** What one pull did. */
export interface PullReport {
  pages: number;
  created: number;
  updated: number;
  removed: number;
  skipped: number;
  /** Delay until the next pull was scheduled. */
  nextInMs: number;
  /** Set when the registry answered 429. */
  rateLimited: boolean;
}

/** Pulls the public MCP registry into the listing table. */
export interface Discovery {
  /** Pulls when the shared schedule says so and no other instance is pulling; else undefined. */
  pullIfDue(): Promise<PullReport | undefined>;
  /** Users searched for tools that are not there: pull sooner (at most the minimum interval). */
  noteUnmetSearch(): Promise<void>;
}

/** The job_leases row that serialises registry pulls across instances and carries their schedule. */
export const DISCOVERY_LEASE = 'mcp-discovery';

/**
 * Creates the discovery client: `GET /v0.1/servers?limit=&cursor=&updated_since=` page by page,
 * incremental after the first full pull; the interval halves after a pull that changed something,
 * doubles after one that did not, stays within [min, max], and honours 429 Retry-After.
 */
export function createDiscovery(options: DiscoveryOptions): Discovery {
  const { store, clock, log } = options;
  if (!URL.canParse(options.registryUrl)) throw new TypeError(`registryUrl is not a URL: ${options.registryUrl}`);
  const base = options.registryUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  const minMs = options.minIntervalMs ?? 60_000;
  const maxMs = options.maxIntervalMs ?? 6 * 3_600_000;
  if (!(minMs > 0) || maxMs < minMs) throw new TypeError('discovery intervals must satisfy 0 < min <= max');
  const pageLimit = options.pageLimit ?? 100;
  const maxPages = options.maxPages ?? 500;
  const timeoutMs = options.requestTimeoutMs ?? 15_000;
  const owner = options.owner ?? `discovery-${randomToken(6)}`;
  const registrant = `registry:${new URL(base).host}`;
  let intervalMs = Math.min(maxMs, Math.max(minMs, options.initialIntervalMs ?? 5 * 60_000));
  // Incremental pulls start from here; a new instance starts with a full pull.
  let updatedSince: string | undefined;

  async function pull(): Promise<PullReport> {
    const started = clock.now();
    const report: PullReport = {
      pages: 0,
      created: 0,
      updated: 0,
      removed: 0,
      skipped: 0,
      nextInMs: 0,
      rateLimited: false,
    };
    let cursor: string | undefined;
    let retryAfterMs: number | undefined;
    for (; report.pages < maxPages;) {
      options.signal?.throwIfAborted();
      const url = new URL(`${base}/v0.1/servers`);
      url.searchParams.set('limit', String(pageLimit));
      if (cursor !== undefined) url.searchParams.set('cursor', cursor);
      if (updatedSince !== undefined) url.searchParams.set('updated_since', updatedSince);
      const response = await doFetch(url, {
        headers: { accept: 'application/json' },
        signal: options.signal
          ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)])
          : AbortSignal.timeout(timeoutMs),
      });
      if (response.status === 429) {
        await response.body?.cancel();
        retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), clock.now()) ?? intervalMs * 2;
        report.rateLimited = true;
        break;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`registry answered ${response.status}`);
      }
      const page = parseRegistryPage(await response.json(), options.allowPrivateTargets ?? false);
      report.pages++;
      const keep: DiscoveredServer[] = [];
      const remove: string[] = [];
      for (const decision of page.decisions) {
        if (decision.kind === 'keep') keep.push(decision.server);
        else if (decision.kind === 'remove') remove.push(decision.registryName);
        else report.skipped++;
      }
      if (keep.length > 0) {
        const counts = await store.upsertDiscovered(keep, registrant, clock.now());
        report.created += counts.created;
        report.updated += counts.updated;
      }
      if (remove.length > 0) report.removed += await store.removeDiscovered(remove, clock.now());
      cursor = page.nextCursor;
      if (cursor === undefined) break;
    }
    const changed = report.created + report.updated + report.removed > 0;
    if (!report.rateLimited) {
      updatedSince = new Date(started - 60_000).toISOString();
      intervalMs = changed ? Math.max(minMs, intervalMs / 2) : Math.min(maxMs, intervalMs * 2);
    }
    report.nextInMs = Math.max(minMs, retryAfterMs ?? intervalMs);
    return report;
  }

  return {
    async pullIfDue() {
      if (!(await store.acquireLease(DISCOVERY_LEASE, owner, clock.now(), 10 * 60_000))) return undefined;
      let report: PullReport | undefined;
      try {
        report = await pull();
        log.info({ ...report }, 'MCP registry pulled');
        return report;
      } catch (error) {
        log.warn({ err: error, registry: base }, 'MCP registry pull failed');
        intervalMs = Math.min(maxMs, intervalMs * 2);
        return { pages: 0, created: 0, updated: 0, removed: 0, skipped: 0, nextInMs: intervalMs, rateLimited: false };
      } finally {
        await store.releaseLease(DISCOVERY_LEASE, owner, clock.now() + (report?.nextInMs ?? intervalMs));
      }
    },
    async noteUnmetSearch() {
      await store.pullSooner(DISCOVERY_LEASE, clock.now() + minMs);
    },
  };
}

/** Retry-After in ms from now (seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
