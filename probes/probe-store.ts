import type { HealthState } from './health-state.ts';
import type { ProbeOutcome } from './probe-endpoint.ts';

/** An endpoint leased for probing. */
export interface ProbeTarget extends HealthState {
  id: string;
  url: string;
  provider: string;
  demandScore: number;
}

/** Everything one finished probe changes, written at once. */
export interface ProbeRecord {
  endpointId: string;
  startedAt: number;
  outcome: ProbeOutcome;
  health: HealthState;
  nextProbeAt: number;
  demandScore: number;
}

/**
 * The storage the prober needs (implemented in src/marketplace over the database). Leases keep
 * two Plaza instances from probing one endpoint at the same time.
 */
export interface ProbeStore {
  /** Leases up to `limit` endpoints due at `now` that nobody holds (FOR UPDATE SKIP LOCKED). */
  claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<ProbeTarget[]>;
  /** Leases one endpoint now, whether due or not; undefined when missing or held by another. */
  claimOne(id: string, owner: string, now: number, leaseMs: number): Promise<ProbeTarget | undefined>;
  /**
   * Records the probe, moves the health, replaces the tools when the probe answered (tools that
   * vanished are deleted; an answer without tools deletes them all) and releases the lease.
   */
  recordProbe(owner: string, record: ProbeRecord): Promise<void>;
  /**
   * Puts a probe off without recording a run (its host's request budget was spent): moves the
   * next probe to `nextProbeAt`, keeps the health as it is, and releases `owner`'s lease.
   */
  deferProbe(owner: string, endpointId: string, nextProbeAt: number): Promise<void>;
  /** Adds demand to endpoints and brings their next probe forward to at most `soonest`. */
  addDemand(weights: ReadonlyMap<string, number>, soonest: number): Promise<void>;
}

/** The logging the probes module needs (pino's Logger fits). */
export interface ProbeLog {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
