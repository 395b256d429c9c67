import type { Clock } from '../src/kernel/index.ts';
import { randomToken } from '../src/kernel/index.ts';
import type { Resolver } from './guarded-fetch.ts';
import { createGuardedRequest, type GuardedRequest } from './guarded-request.ts';
import { DEFAULT_HEALTH_POLICY, type EndpointStatus, type HealthPolicy, nextHealth } from './health-state.ts';
import { budgetHost, type HostBudget, HostBudgetError, UNBOUNDED_HOST_BUDGET } from './host-budget.ts';
import { type ConcurrencyLimits, createHostQueues } from './host-queues.ts';
import { probeEndpoint, type ProbeOutcome } from './probe-endpoint.ts';
import type { ProbeLog, ProbeStore, ProbeTarget } from './probe-store.ts';
import { nextProbeDelayMs } from './schedule.ts';

/** Options of createProber; checked at creation. */
export interface ProberOptions {
  store: ProbeStore;
  clock: Clock;
  log: ProbeLog;
  /** PLAZA_PROBE_BASE_INTERVAL_S. */
  baseIntervalS: number;
  /** PLAZA_ALLOW_PRIVATE_TARGETS: let loopback/private targets through (development, tests). */
  allowPrivateTargets: boolean;
  /** DNS resolution for the SSRF guard; defaults to the system resolver. */
  resolve?: Resolver;
  concurrency?: ConcurrencyLimits;
  /**
   * Bounds the requests sent to one host over all its listings (PLAZA_PROBE_HOST_REQUESTS_PER_MIN);
   * every request counts, redirect hops included. A probe refused by it is put off, not failed.
   * Unbounded when not given.
   */
  hostBudget?: HostBudget;
  /** A whole probe (initialize + all pages), in ms (default 15 000). */
  timeoutMs?: number;
  /** Answers slower than this count as bad (default 5 000 ms). */
  slowMs?: number;
  healthPolicy?: HealthPolicy;
  /** Lease owner name; defaults to a random one per prober. */
  owner?: string;
  random?: () => number;
}

/** How one probe ended. */
export interface ProbeResult {
  endpointId: string;
  ok: boolean;
  status: EndpointStatus;
  toolCount: number;
  latencyMs: number;
  error: string | null;
  /** The probe was put off because its host's request budget was spent (nothing recorded). */
  deferred?: true;
}

/** Drives probes; tests call `runDue` and `probeNow` directly instead of waiting for timers. */
export interface Prober {
  /** Owner name of this prober's leases. */
  readonly owner: string;
  /** Leases every due endpoint (in batches of `limit`), probes them, records the results. */
  runDue(limit?: number): Promise<ProbeResult[]>;
  /** Probes one endpoint now; undefined when it does not exist or another prober holds it. */
  probeNow(endpointId: string): Promise<ProbeResult | undefined>;
  /** Aborts running probes (recorded as failed), waits for them, closes connections. */
  close(): Promise<void>;
}

/** Creates a prober: SSRF-guarded MCP probes, hysteresis health, adaptive next-probe times. */
export function createProber(options: ProberOptions): Prober {
  const { store, clock, log } = options;
  if (!(options.baseIntervalS > 0)) throw new TypeError('baseIntervalS must be positive');
  const baseMs = options.baseIntervalS * 1000;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const slowMs = options.slowMs ?? 5_000;
  const policy = options.healthPolicy ?? DEFAULT_HEALTH_POLICY;
  const random = options.random ?? Math.random;
  const owner = options.owner ?? `prober-${randomToken(6)}`;
  const limits = options.concurrency ?? { global: 8, perHost: 2 };
  // A lease must outlast the wait too: a batch of `batch` endpoints on one host runs `perHost`
  // at a time, and a lease that ran out while its probe was queued let another instance take it.
  const leaseMs = (batch: number) => timeoutMs * (Math.ceil(batch / limits.perHost) + 2) + 5_000;
  const queues = createHostQueues(limits);
  const guarded = createGuardedRequest({
    allowPrivate: options.allowPrivateTargets,
    resolve: options.resolve,
    timeoutMs,
  });
  const running = new Set<Promise<unknown>>();
  const closing = new AbortController();
  const hostBudget = options.hostBudget ?? UNBOUNDED_HOST_BUDGET;

  async function probe(target: ProbeTarget): Promise<ProbeResult> {
    const startedAt = clock.now();
    let outcome: ProbeOutcome;
    /** Set when the host budget refused one of this probe's requests: how long until it has room. */
    let refusedForMs: number | undefined;
    const beforeSend = async (url: URL) => {
      const host = budgetHost(url);
      const decision = await hostBudget.take(host);
      if (decision.allowed) return;
      refusedForMs = Math.max(refusedForMs ?? 0, decision.retryAfterMs);
      throw new HostBudgetError(host, decision.retryAfterMs);
    };
    const send: GuardedRequest = (url, init, read) => guarded.request(url, { ...init, beforeSend }, read);
    try {
      outcome = await queues.run(hostOf(target.url), () =>
        probeEndpoint(target.url, send, { timeoutMs, maxPages: 50, maxTools: 1_000, signal: closing.signal }, () =>
          clock.now(),
        ),
      );
    } catch (error) {
      outcome = {
        ok: false,
        latencyMs: clock.now() - startedAt,
        protocolVersion: null,
        revisions: [],
        capabilities: null,
        serverInfo: null,
        tools: [],
        error: String(error),
      };
    }
    // A probe cut short by its host's budget says nothing about the endpoint: it is put off to when
    // the budget has room again (spread, so the put-off probes of one host do not return at once).
    // (A refused closing DELETE after a whole answer does not count: the probe is recorded.)
    if (!outcome.ok && refusedForMs !== undefined) {
      const nextProbeAt = clock.now() + Math.round(refusedForMs * (1 + random()));
      await store.deferProbe(owner, target.id, nextProbeAt);
      log.debug(
        { endpoint_id: target.id, provider: target.provider, next_probe_at: new Date(nextProbeAt).toISOString() },
        'probe put off: its host is at the per-host probe bound',
      );
      return {
        endpointId: target.id,
        ok: false,
        status: target.status,
        toolCount: 0,
        latencyMs: outcome.latencyMs,
        error: outcome.error,
        deferred: true,
      };
    }
    const health = nextHealth(
      target,
      {
        ok: outcome.ok,
        toolCount: outcome.tools.length,
        slow: outcome.latencyMs > slowMs,
        authRequired: outcome.authRequired === true,
      },
      policy,
    );
    const demandScore = target.demandScore / 2;
    const delay = nextProbeDelayMs({ ...health, demandScore }, { baseMs }, random);
    await store.recordProbe(owner, {
      endpointId: target.id,
      startedAt,
      outcome,
      health,
      nextProbeAt: clock.now() + delay,
      demandScore,
    });
    if (health.status !== target.status) {
      log.info(
        {
          endpoint_id: target.id,
          provider: target.provider,
          from: target.status,
          to: health.status,
          error: outcome.error,
          detail: outcome.logDetail,
        },
        'endpoint health changed',
      );
    } else if (outcome.logDetail) {
      log.debug(
        { endpoint_id: target.id, provider: target.provider, error: outcome.error, detail: outcome.logDetail },
        'probe refused',
      );
    }
    return {
      endpointId: target.id,
      ok: outcome.ok,
      status: health.status,
      toolCount: outcome.tools.length,
      latencyMs: outcome.latencyMs,
      error: outcome.error,
    };
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    running.add(promise);
    void promise.finally(() => running.delete(promise)).catch(() => undefined);
    return promise;
  }

  return {
    owner,
    async runDue(limit = limits.global * 4) {
      const results: ProbeResult[] = [];
      while (!closing.signal.aborted) {
        const targets = await store.claimDue(owner, clock.now(), leaseMs(limit), limit);
        if (targets.length === 0) return results;
        const settled = await track(Promise.allSettled(targets.map(probe)));
        for (const [i, outcome] of settled.entries()) {
          if (outcome.status === 'fulfilled') results.push(outcome.value);
          // A probe that could not be recorded keeps its lease until it expires, then runs again.
          else log.error({ err: outcome.reason, endpoint_id: targets[i]!.id }, 'probe could not be recorded');
        }
        if (targets.length < limit) return results;
      }
      return results;
    },
    async probeNow(endpointId) {
      const target = await store.claimOne(endpointId, owner, clock.now(), leaseMs(1));
      return target ? track(probe(target)) : undefined;
    },
    async close() {
      // Probes cut short by shutdown are recorded as failed; their endpoints are probed again soon.
      closing.abort();
      await Promise.allSettled([...running]);
      await queues.onIdle();
      await guarded.close();
    },
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
