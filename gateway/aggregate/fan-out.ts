/**
 * The lists `/mcp` gathers from its connectors (resources, resource templates, prompts): asked of
 * every online connector whose recorded capabilities declare the feature, a few at a time, each
 * within its own deadline, its pages followed to a bound; a connector that fails or is slow is
 * left out of that answer. What one agent was shown is reused for a few seconds by this instance
 * (see docs/decisions/gateway.md, "/mcp gathers resources and prompts when asked").
 */
import type { AgentIdentity } from '../identity/agin-card.ts';
import type { CatalogConnector, ToolCatalog } from './catalog.ts';

/** A list `/mcp` gathers, with the capability a connector must declare and the field its items are in. */
export const GATHERED_LISTS = {
  'resources/list': { capability: 'resources', field: 'resources' },
  'resources/templates/list': { capability: 'resources', field: 'resourceTemplates' },
  'prompts/list': { capability: 'prompts', field: 'prompts' },
} as const;
export type GatheredList = keyof typeof GATHERED_LISTS;

/** Asks one connector for one page of a list (for `identity`); resolves with its result, throws when it failed. */
export type AskConnector = (
  connector: CatalogConnector,
  method: GatheredList,
  cursor: string | undefined,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

/** Limits of the gathering. */
export interface FanOutLimits {
  /** How long one agent's gathered list is reused by this instance (ms). */
  cacheMs: number;
  /** Connectors asked at once. */
  concurrency: number;
  /** How long one connector may take for all its pages (ms). */
  perConnectorMs: number;
  /** Pages followed per connector. */
  maxPages: number;
  /** Lists held in the cache at most (agents × lists). */
  maxCached: number;
}

export const DEFAULT_FAN_OUT_LIMITS: FanOutLimits = {
  cacheMs: 5_000,
  concurrency: 4,
  perConnectorMs: 5_000,
  maxPages: 10,
  maxCached: 1_000,
};

/** One gathered item and the connector it came from. */
export interface GatheredItem {
  provider: string;
  item: Record<string, unknown>;
}

/** Gathers lists from connectors, per agent, with a short cache. */
export function createFanOut(catalog: ToolCatalog, limits: FanOutLimits = DEFAULT_FAN_OUT_LIMITS) {
  const cache = new Map<string, { until: number; items: Promise<GatheredItem[]> }>();

  async function gather(method: GatheredList, ask: AskConnector): Promise<GatheredItem[]> {
    const { capability, field } = GATHERED_LISTS[method];
    const connectors = ((await catalog.onlineConnectors?.()) ?? []).filter(
      (c) => c.capabilities !== undefined && c.capabilities[capability] !== undefined,
    );
    const out: GatheredItem[][] = connectors.map(() => []);
    let next = 0;
    const worker = async () => {
      while (next < connectors.length) {
        const index = next++;
        const connector = connectors[index]!;
        const signal = AbortSignal.timeout(limits.perConnectorMs);
        try {
          let cursor: string | undefined;
          for (let page = 0; page < limits.maxPages; page++) {
            const result = await ask(connector, method, cursor, signal);
            const items = result[field];
            if (Array.isArray(items))
              for (const item of items)
                if (typeof item === 'object' && item !== null)
                  out[index]!.push({ provider: connector.provider, item: item as Record<string, unknown> });
            cursor = typeof result['nextCursor'] === 'string' ? result['nextCursor'] : undefined;
            if (cursor === undefined) break;
          }
        } catch {
          // Left out of this answer: one connector's failure does not fail the list.
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(limits.concurrency, connectors.length) }, worker));
    return out.flat();
  }

  return {
    /** `method`'s items from every connector that declares the feature, as `identity` is shown them. */
    list(identity: AgentIdentity, method: GatheredList, ask: AskConnector, now: number): Promise<GatheredItem[]> {
      const key = `${identity.agentId}\n${method}`;
      const hit = cache.get(key);
      if (hit && hit.until > now) return hit.items;
      const items = gather(method, ask);
      if (cache.size >= limits.maxCached) cache.clear();
      const entry = { until: now + limits.cacheMs, items };
      cache.set(key, entry);
      items.catch(() => {
        if (cache.get(key) === entry) cache.delete(key);
      });
      return items;
    },
  };
}

export type FanOut = ReturnType<typeof createFanOut>;
