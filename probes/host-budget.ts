/** The answer of a host budget for one request. */
export interface HostBudgetDecision {
  allowed: boolean;
  /** When the budget has room again, in ms from now (meaningful when not allowed). */
  retryAfterMs: number;
}

/**
 * A bound on the requests probes send to one host, over every listing that points at it (each
 * listing is someone's claim, so many listings of one host must not multiply Plaza's traffic to
 * it). `src/` backs it with a shared counter (Redis when configured).
 */
export interface HostBudget {
  /** Counts one request to `host` (a lower-case host name, no port) and says whether it may go. */
  take(host: string): Promise<HostBudgetDecision>;
}

/** No bound (the prober's default when none is given). */
export const UNBOUNDED_HOST_BUDGET: HostBudget = { take: async () => ({ allowed: true, retryAfterMs: 0 }) };

/** A request a probe did not send because its host's budget was spent. */
export class HostBudgetError extends Error {
  readonly host: string;
  readonly retryAfterMs: number;
  constructor(host: string, retryAfterMs: number) {
    super(
      `Probe requests to ${host} are over the per-host bound; the probe waits ${Math.ceil(retryAfterMs / 1000)} s.`,
    );
    this.name = 'HostBudgetError';
    this.host = host;
    this.retryAfterMs = retryAfterMs;
  }
}

/** The key a URL's requests count under: its host name, without port (one machine, one budget). */
export function budgetHost(url: URL): string {
  return url.hostname.toLowerCase().replace(/\.$/, '');
}
