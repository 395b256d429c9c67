/**
 * An endpoint's health (spec §3.1, extended): `registered` until it answers with tools; `healthy`
 * and `degraded` are online (their tools are listed); `unreachable` is offline; `auth_required`
 * answers, but only callers with a credential of their own (HTTP 401 to the probe, which has none):
 * its tools are unknown, and the passthrough still routes callers who bring one.
 */
export type EndpointStatus = 'registered' | 'healthy' | 'degraded' | 'unreachable' | 'auth_required';

/** Statuses whose tools appear in the online tools list. */
export const ONLINE_STATUSES: readonly EndpointStatus[] = ['healthy', 'degraded'];

/** The health an endpoint carries between probes. */
export interface HealthState {
  status: EndpointStatus;
  /**
   * Bad probes in a row (failed, or slow while still healthy); once degraded, failed probes since
   * the last answer, slow or not.
   */
  consecutiveFailures: number;
  /** Good probes in a row (answered in time with tools). */
  consecutiveSuccesses: number;
}

/** How one probe went, as far as health is concerned. */
export interface ProbeVerdict {
  ok: boolean;
  toolCount: number;
  slow: boolean;
  /** The endpoint answered HTTP 401: it serves callers with a credential of their own. */
  authRequired?: boolean;
}

/** The hysteresis thresholds. */
export interface HealthPolicy {
  /** Bad probes in a row that turn healthy into degraded. */
  degradeAfter: number;
  /** Failed probes in a row that turn an endpoint unreachable (tools hidden). */
  unreachableAfter: number;
  /** Good probes in a row that turn degraded (or unreachable) back into healthy. */
  recoverAfter: number;
}

/** Defaults: one blip never flaps a listing; four failures in a row hide it. */
export const DEFAULT_HEALTH_POLICY: HealthPolicy = { degradeAfter: 2, unreachableAfter: 4, recoverAfter: 2 };

/**
 * The next health after a probe. An answer with no tools makes the endpoint a registered
 * candidate again. A recovering endpoint comes back online as degraded on its first good answer
 * and turns healthy after `recoverAfter` good answers; a slow answer counts as bad but never makes
 * an endpoint unreachable, since it did answer.
 */
export function nextHealth(
  current: HealthState,
  verdict: ProbeVerdict,
  policy: HealthPolicy = DEFAULT_HEALTH_POLICY,
): HealthState {
  if (verdict.authRequired) {
    // An answer, not a failure: the endpoint is up and asks for a credential the probe lacks. One
    // that is online with tools keeps them through a blip, as through failures: it turns
    // auth_required only when it has asked as many times in a row as would make it unreachable.
    const online = current.status === 'healthy' || current.status === 'degraded';
    const failures = current.consecutiveFailures + 1;
    if (online && failures < policy.unreachableAfter) {
      const status = current.status === 'healthy' && failures < policy.degradeAfter ? 'healthy' : 'degraded';
      return { status, consecutiveFailures: failures, consecutiveSuccesses: 0 };
    }
    return { status: 'auth_required', consecutiveFailures: 0, consecutiveSuccesses: 0 };
  }
  if (verdict.ok && verdict.toolCount === 0)
    return { status: 'registered', consecutiveFailures: 0, consecutiveSuccesses: 0 };
  if (verdict.ok && !verdict.slow) {
    const successes = current.consecutiveSuccesses + 1;
    const recovering = current.status === 'degraded' || current.status === 'unreachable';
    const status = recovering && successes < policy.recoverAfter ? 'degraded' : 'healthy';
    return { status, consecutiveFailures: 0, consecutiveSuccesses: successes };
  }
  const failures = current.consecutiveFailures + 1;
  if (verdict.ok) {
    // Slow but answering with tools.
    const status =
      current.status === 'registered'
        ? 'healthy'
        : current.status === 'healthy' && failures < policy.degradeAfter
          ? 'healthy'
          : 'degraded';
    // Once degraded, the count is of failures since the last answer: a slow answer is one, so it
    // starts a new run (slow, slow, slow, fail hid an endpoint that had never stopped answering).
    return { status, consecutiveFailures: status === 'degraded' ? 0 : failures, consecutiveSuccesses: 0 };
  }
  let status: EndpointStatus = current.status;
  if (failures >= policy.unreachableAfter) status = 'unreachable';
  else if (current.status === 'healthy' && failures >= policy.degradeAfter) status = 'degraded';
  return { status, consecutiveFailures: failures, consecutiveSuccesses: 0 };
}
