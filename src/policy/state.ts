/**
 * This instance's view of policies: each agent's effective policy, each provider's declared limits
 * and the tool annotations rules ask about, read from the database and kept for `ttlMs`. As agent
 * revocation does (src/agents), a change reaches every instance when its entry expires, with no
 * messaging between instances: a TTL of 2 s makes it effective everywhere within 5 s. A policy is
 * compiled once per change: a refresh that reads the same document keeps the compiled one.
 */
import type { Clock } from '../kernel/index.ts';
import type { WindowLimits } from './document.ts';
import { type EffectivePolicy, effectivePolicy } from './effective.ts';
import type { PolicyStore } from './store.ts';

/** The cached reads the gateway hook and the API share. */
export interface PolicyState {
  /** The agent's effective policy; undefined when the agent does not exist. */
  agent(agentId: string): EffectivePolicy | undefined | Promise<EffectivePolicy | undefined>;
  providerLimits(provider: string): WindowLimits | undefined | Promise<WindowLimits | undefined>;
  toolAnnotations(provider: string, tool: string): Promise<Readonly<Record<string, unknown>> | undefined>;
  /** Drops this instance's copy of an agent's policy (after a change here); others follow within the TTL. */
  forgetAgent(agentId: string): void;
  /** Drops every agent's copy (after an account's default changed here). */
  forgetAll(): void;
}

interface Entry<T> {
  until: number;
  value: T | undefined;
  pending: Promise<T> | undefined;
  /** The stored form the value was built from (to keep a compiled policy over a refresh). */
  source?: string;
  /** Whether a read ever succeeded (the value may then stand in while the database is unreachable). */
  loaded?: boolean;
}

/** How long a value read before stands in after a failed read, before the next try. */
const RETRY_MS = 1_000;

/** Most entries of each kind an instance keeps. */
const MAX_ENTRIES = 10_000;

/**
 * A TTL cache that answers synchronously while fresh, and reads again (one read at a time per key)
 * once stale; `build` may reuse the previous value when the source did not change. When a read
 * fails, a value read before stands in (and the read is tried again a second later): calls go on
 * under the policy last seen while the database is briefly unreachable, as they do under the
 * agent's cached credential; with nothing read before, the error reaches the caller.
 */
function ttlCache<T, R>(
  clock: Clock,
  ttlMs: number,
  read: (key: string) => Promise<R>,
  build: (raw: R, previous: Entry<T> | undefined) => { value: T; source?: string },
) {
  const entries = new Map<string, Entry<T>>();
  const load = (key: string, previous: Entry<T> | undefined): Promise<T> => {
    const entry: Entry<T> = previous ?? { until: 0, value: undefined, pending: undefined };
    const pending = read(key).then(
      (raw) => {
        const built = build(raw, previous);
        entry.value = built.value;
        if (built.source !== undefined) entry.source = built.source;
        entry.until = clock.now() + ttlMs;
        entry.pending = undefined;
        entry.loaded = true;
        return built.value;
      },
      (error: unknown) => {
        entry.pending = undefined;
        if (!entry.loaded) throw error;
        entry.until = clock.now() + RETRY_MS;
        return entry.value as T;
      },
    );
    entry.pending = pending;
    if (!previous) {
      if (entries.size >= MAX_ENTRIES) entries.clear();
      entries.set(key, entry);
    }
    return pending;
  };
  return {
    get(key: string): T | Promise<T> {
      const entry = entries.get(key);
      if (entry?.pending) return entry.pending;
      if (entry && entry.until > clock.now()) return entry.value as T;
      return load(key, entry);
    },
    delete: (key: string) => entries.delete(key),
    clear: () => entries.clear(),
  };
}

/** Creates this instance's policy state over `store`. */
export function createPolicyState(options: { store: PolicyStore; clock: Clock; ttlMs?: number }): PolicyState {
  const { store, clock } = options;
  const ttlMs = options.ttlMs ?? 2_000;
  const agents = ttlCache<EffectivePolicy | undefined, Awaited<ReturnType<PolicyStore['agent']>>>(
    clock,
    ttlMs,
    (agentId) => store.agent(agentId),
    (row, previous) => {
      if (!row) return { value: undefined, source: '' };
      const source = JSON.stringify(row);
      if (previous?.value && previous.source === source) return { value: previous.value, source };
      return { value: effectivePolicy(row), source };
    },
  );
  const providers = ttlCache<WindowLimits | undefined, WindowLimits | undefined>(
    clock,
    ttlMs,
    (provider) => store.providerLimits(provider),
    (limits) => ({ value: limits }),
  );
  const annotations = ttlCache<
    Readonly<Record<string, unknown>> | undefined,
    Readonly<Record<string, unknown>> | undefined
  >(
    clock,
    ttlMs,
    (key) => {
      const at = key.indexOf('\u0000');
      return store.toolAnnotations(key.slice(0, at), key.slice(at + 1));
    },
    (value) => ({ value }),
  );
  return {
    agent: (agentId) => agents.get(agentId),
    providerLimits: (provider) => providers.get(provider),
    toolAnnotations: async (provider, tool) => annotations.get(`${provider}\u0000${tool}`),
    forgetAgent: (agentId) => void agents.delete(agentId),
    forgetAll: () => agents.clear(),
  };
}
