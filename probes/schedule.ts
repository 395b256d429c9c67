import type { HealthState } from './health-state.ts';

/** What the scheduler knows about an endpoint when it picks the next probe time. */
export interface ScheduleInput extends HealthState {
  /** Recent demand (catalog hits, gateway calls), decayed by half at every probe. */
  demandScore: number;
}

/** Scheduler bounds. */
export interface SchedulePolicy {
  /** PLAZA_PROBE_BASE_INTERVAL_S in ms. */
  baseMs: number;
  /** Shortest delay ever (default base / 8, at least 5 s). */
  minMs?: number;
  /** Longest delay ever (default base × 8). */
  maxMs?: number;
  /** Relative jitter, 0..1 (default 0.2). */
  jitter?: number;
}

/**
 * Milliseconds until the next probe. Demand shortens it (1 + log2(1 + demand) times), idle
 * endpoints wait twice the base, failing ones back off exponentially from a quarter of the base,
 * and every delay gets ±jitter so a fleet does not probe in lock-step.
 */
export function nextProbeDelayMs(
  input: ScheduleInput,
  policy: SchedulePolicy,
  random: () => number = Math.random,
): number {
  const base = policy.baseMs;
  const min = policy.minMs ?? Math.max(5_000, base / 8);
  const max = policy.maxMs ?? base * 8;
  const jitter = policy.jitter ?? 0.2;
  let delay: number;
  if (input.consecutiveFailures > 0) {
    delay = (base / 4) * 2 ** Math.min(input.consecutiveFailures - 1, 10);
  } else if (input.demandScore >= 0.5) {
    delay = base / (1 + Math.log2(1 + input.demandScore));
  } else {
    delay = input.status === 'registered' ? base : base * 2;
  }
  delay *= 1 + jitter * (2 * random() - 1);
  return Math.round(Math.min(max, Math.max(min, delay)));
}
