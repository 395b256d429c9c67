/** A package source as the worker sees it (spec §2.10 plus its state). */
export interface SourceTarget {
  id: string;
  packageId: string;
  version: string;
  downloadUri: string;
  sha256: string;
  trust: 'risky-unknown' | 'known-user';
  /** registered (first pipeline run), healthy (re-probe) or dropped (re-probe of a dead link). */
  status: 'registered' | 'healthy' | 'dropped';
  /** Failed attempts so far in the current state (retries, dead re-probes). */
  attempts: number;
  /**
   * The previous lease ended without an outcome: the instance working the source stopped (a
   * crash, a kill) in the middle of it. Such a check is not simply run again (see the worker).
   */
  abandoned: boolean;
}

/** One scan finding; `severity` high means the source may not be listed. */
export interface SourceFinding {
  id: string;
  severity: 'high' | 'medium' | 'low' | 'info';
  file: string | null;
  message: string;
}

/** The scan verdict: the highest severity found (`none` when nothing was). */
export type RiskVerdict = 'none' | 'low' | 'medium' | 'high';

/** A gate passed on the way, recorded as a transition with its time. */
export interface PassedStep {
  to: 'command-surface' | 'scan';
  at: number;
  reason: string;
}

/** What the worker concluded for one source; the store turns it into states and events. */
export type SourceOutcome =
  | { kind: 'passed'; steps: PassedStep[]; findings: SourceFinding[]; risk: RiskVerdict; commands: SourceCommand[] }
  /** A gate failed: a known user's source is rejected (and notified), an anonymous one discarded. */
  | {
      kind: 'failed';
      steps: PassedStep[];
      stage: 'probe' | 'command-surface' | 'scan';
      reason: string;
      findings: SourceFinding[];
      risk: RiskVerdict | null;
    }
  /** A transient failure of a first probe: try again at `retryAt`. */
  | { kind: 'retry'; reason: string; retryAt: number }
  /** A re-probe found the link dead: off the discoverable list, checked again at `retryAt`. */
  | { kind: 'dead'; reason: string; retryAt: number }
  /** A re-probe found different bytes behind the link. */
  | { kind: 'drift'; reason: string };

/** Storage of the source worker; `src/` implements it over the database. */
export interface SourceStore {
  /** Leases due sources (`FOR UPDATE SKIP LOCKED`): no other owner gets them until the lease ends. */
  claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<SourceTarget[]>;
  /** Leases one source now, whatever its schedule; undefined when it is leased elsewhere or final. */
  claimOne(id: string, owner: string, now: number, leaseMs: number): Promise<SourceTarget | undefined>;
  /** Extends a lease still held by `owner` (a long check is not taken for an abandoned one). */
  renew(id: string, owner: string, until: number): Promise<void>;
  /** Marks the stage a source is in while the worker runs it (for the list view). */
  markStage(id: string, owner: string, stage: string): Promise<void>;
  /** Records the outcome, moves the state, releases the lease; returns the new status. */
  record(owner: string, target: SourceTarget, outcome: SourceOutcome, now: number): Promise<string>;
}

/** A command of a package's surface, as the package page lists it. */
export interface SourceCommand {
  id: string;
  summary: string;
}

/** Checks an archive that matched its digest: the command-surface gate, then the scan. */
export type SourceInspector = (
  archivePath: string,
  target: SourceTarget,
) => Promise<{
  gateProblems: string[];
  /** False when the archive could not even be opened safely (the scan then fails on its own). */
  surfaceChecked: boolean;
  findings: SourceFinding[];
  risk: RiskVerdict;
  /** The command surface that passed the gate (empty when it did not). */
  commands: SourceCommand[];
}>;
