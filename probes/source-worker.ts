import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Clock } from '../src/kernel/index.ts';
import { randomToken } from '../src/kernel/index.ts';
import { createGuardedFetch, type Resolver } from './guarded-fetch.ts';
import { downloadSource } from './source-download.ts';
import type { PassedStep, SourceInspector, SourceOutcome, SourceStore, SourceTarget } from './source-store.ts';

/** Options of createSourceWorker; checked at creation. */
export interface SourceWorkerOptions {
  store: SourceStore;
  inspect: SourceInspector;
  clock: Clock;
  log: {
    info(obj: object, msg?: string): void;
    warn(obj: object, msg?: string): void;
    error(obj: object, msg?: string): void;
  };
  /** PLAZA_ALLOW_PRIVATE_TARGETS: development and tests only. */
  allowPrivateTargets: boolean;
  /** Largest archive downloaded (PLAZA_SOURCES_MAX_BYTES). */
  maxBytes: number;
  /** Re-probe period of healthy sources (PLAZA_SOURCES_RECHECK_S). */
  recheckMs: number;
  /** Whole download, ms (default 60 000). */
  timeoutMs?: number;
  resolve?: Resolver;
  owner?: string;
  /** Sources worked at once by this instance (default 2). */
  concurrency?: number;
}

/** What one pass over a source produced. */
export interface SourceRunResult {
  id: string;
  status: string;
  outcome: SourceOutcome['kind'];
}

/** Drives the pipeline of spec §3.2; tests call `runDue`/`checkNow` instead of waiting for timers. */
export interface SourceWorker {
  readonly owner: string;
  runDue(limit?: number): Promise<SourceRunResult[]>;
  /** Works one source now (re-probe included); undefined when it is leased elsewhere or final. */
  checkNow(id: string): Promise<SourceRunResult | undefined>;
  close(): Promise<void>;
}

/** Retry delays of a first probe that failed transiently; afterwards the gate fails. */
const FIRST_PROBE_RETRIES_MS = [60_000, 5 * 60_000];
/** A dropped source is discarded after this many dead re-probes in a row. */
export const MAX_DEAD_REPROBES = 8;

/**
 * Creates the package source worker: download through the SSRF guard with a streaming sha256,
 * then the injected inspector (command-surface gate + open-source scan), then the store records
 * the state. Leases come from the store, so several instances never work one source at once.
 */
export function createSourceWorker(options: SourceWorkerOptions): SourceWorker {
  const { store, clock, log, inspect } = options;
  if (!(options.maxBytes > 0) || !(options.recheckMs > 0))
    throw new TypeError('maxBytes and recheckMs must be positive');
  const timeoutMs = options.timeoutMs ?? 60_000;
  const owner = options.owner ?? `sources-${randomToken(6)}`;
  const leaseMs = timeoutMs * 3 + 60_000;
  const concurrency = options.concurrency ?? 2;
  const guarded = createGuardedFetch({
    allowPrivate: options.allowPrivateTargets,
    resolve: options.resolve,
    timeoutMs,
    maxResponseBytes: options.maxBytes,
  });
  const closing = new AbortController();
  const running = new Set<Promise<unknown>>();

  async function evaluate(target: SourceTarget, dir: string): Promise<SourceOutcome> {
    const reprobe = target.status !== 'registered';
    const file = join(dir, 'package.agpk');
    if (!reprobe) await store.markStage(target.id, owner, 'probe');
    const download = await downloadSource(target.downloadUri, file, guarded.fetch, closing.signal);
    const now = clock.now();
    if (!download.ok) {
      if (reprobe)
        return {
          kind: 'dead',
          reason: `link dead: ${download.reason}`,
          retryAt: now + Math.min(options.recheckMs * 2 ** target.attempts, 24 * 3600_000),
        };
      const delay = FIRST_PROBE_RETRIES_MS[target.attempts];
      if (download.transient && delay !== undefined)
        return { kind: 'retry', reason: download.reason, retryAt: now + delay };
      return {
        kind: 'failed',
        steps: [],
        stage: 'probe',
        reason: `download failed: ${download.reason}`,
        findings: [],
        risk: null,
      };
    }
    if (download.sha256 !== target.sha256) {
      const reason = `sha256 mismatch: registered ${target.sha256}, the link serves ${download.sha256}`;
      if (reprobe) return { kind: 'drift', reason: `hash drift: ${reason}` };
      return { kind: 'failed', steps: [], stage: 'probe', reason, findings: [], risk: null };
    }
    const steps: PassedStep[] = [
      {
        to: 'command-surface',
        at: clock.now(),
        reason: `reachable over HTTPS and sha256 matches (${download.bytes} bytes)`,
      },
    ];
    if (!reprobe) await store.markStage(target.id, owner, 'command-surface');
    const inspection = await inspect(file, target);
    if (inspection.gateProblems.length > 0) {
      const shown = inspection.gateProblems.slice(0, 5).join('; ');
      const more = inspection.gateProblems.length > 5 ? ` (and ${inspection.gateProblems.length - 5} more)` : '';
      // Archive-level findings (a setuid bit, a deny-listed archive) are kept even when the gate fails.
      const risk = inspection.findings.length > 0 ? inspection.risk : null;
      return {
        kind: 'failed',
        steps,
        stage: 'command-surface',
        reason: `command-surface gate failed: ${shown}${more}`,
        findings: inspection.findings,
        risk,
      };
    }
    if (inspection.surfaceChecked)
      steps.push({ to: 'scan', at: clock.now(), reason: 'valid command surface and usage file' });
    if (inspection.risk === 'high') {
      const high = inspection.findings.filter((f) => f.severity === 'high');
      const reason = `high-risk scan verdict: ${high
        .slice(0, 3)
        .map((f) => f.message)
        .join('; ')}${high.length > 3 ? ` (and ${high.length - 3} more)` : ''}`;
      return { kind: 'failed', steps, stage: 'scan', reason, findings: inspection.findings, risk: 'high' };
    }
    return {
      kind: 'passed',
      steps,
      findings: inspection.findings,
      risk: inspection.risk,
      commands: inspection.commands,
    };
  }

  /**
   * What a check cut short by the end of its instance (see SourceTarget.abandoned) comes to. A
   * first check is not run again: if the archive is what stopped the instance, running it again
   * stops the next one, and the one after (issue 31). It fails (register again to retry). A
   * re-probe (of bytes that passed before) is tried again later, backing off.
   */
  function abandonedOutcome(target: SourceTarget): SourceOutcome {
    const now = clock.now();
    if (target.status !== 'registered') {
      return {
        kind: 'retry',
        reason: 'the last re-probe did not finish (the instance working it stopped)',
        retryAt: now + Math.min(options.recheckMs * 2 ** target.attempts, 24 * 3600_000),
      };
    }
    const reason =
      'the check did not finish: the Plaza instance working it stopped while checking it, and a check that may stop it is not run again; register the source again to retry';
    return { kind: 'failed', steps: [], stage: 'command-surface', reason, findings: [], risk: null };
  }

  async function work(target: SourceTarget): Promise<SourceRunResult> {
    if (target.abandoned) {
      const outcome = abandonedOutcome(target);
      log.warn(
        { source_id: target.id, package_id: target.packageId, version: target.version, outcome: outcome.kind },
        'package source check was abandoned by a stopped instance',
      );
      const status = await store.record(owner, target, outcome, clock.now());
      return { id: target.id, status, outcome: outcome.kind };
    }
    const dir = await mkdtemp(join(tmpdir(), 'plaza-source-'));
    // A check may outlast its lease (a slow origin, a long scan): held while it runs, so only a
    // stopped instance leaves an expired lease behind.
    const renew = setInterval(() => {
      store
        .renew(target.id, owner, clock.now() + leaseMs)
        .catch((error: unknown) => log.warn({ err: error, source_id: target.id }, 'source lease not renewed'));
    }, leaseMs / 3);
    renew.unref();
    let outcome: SourceOutcome;
    try {
      outcome = await evaluate(target, dir);
    } catch (error) {
      // Our own failure (disk, bug): try again later rather than blaming the publisher, but not
      // forever: a first check that keeps failing inside Plaza ends as failed (register again).
      log.error({ err: error, source_id: target.id }, 'source worker failed');
      const delay = FIRST_PROBE_RETRIES_MS[target.attempts];
      outcome =
        target.status !== 'registered'
          ? {
              kind: 'dead',
              reason: 'internal error while re-probing; will retry',
              retryAt: clock.now() + options.recheckMs,
            }
          : delay !== undefined
            ? { kind: 'retry', reason: 'internal error while checking; will retry', retryAt: clock.now() + delay }
            : {
                kind: 'failed',
                steps: [],
                stage: 'command-surface',
                reason: `internal error while checking, ${target.attempts + 1} times; register the source again to retry`,
                findings: [],
                risk: null,
              };
    } finally {
      clearInterval(renew);
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
    const status = await store.record(owner, target, outcome, clock.now());
    log.info(
      { source_id: target.id, package_id: target.packageId, version: target.version, outcome: outcome.kind, status },
      'package source checked',
    );
    return { id: target.id, status, outcome: outcome.kind };
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    running.add(promise);
    return promise.finally(() => running.delete(promise));
  }

  return {
    owner,
    async runDue(limit = 10) {
      if (closing.signal.aborted) return [];
      const targets = await store.claimDue(owner, clock.now(), leaseMs, limit);
      const results: SourceRunResult[] = [];
      for (let i = 0; i < targets.length; i += concurrency) {
        // One source whose result cannot be stored must not cost the others theirs.
        for (const settled of await Promise.allSettled(targets.slice(i, i + concurrency).map((t) => track(work(t))))) {
          if (settled.status === 'fulfilled') results.push(settled.value);
          else
            log.error(
              { err: settled.reason },
              'source check result not stored; the source is checked again when its lease ends',
            );
        }
      }
      return results;
    },
    async checkNow(id) {
      const target = await store.claimOne(id, owner, clock.now(), leaseMs);
      return target ? track(work(target)) : undefined;
    },
    async close() {
      closing.abort();
      await Promise.allSettled([...running]);
      await guarded.close();
    },
  };
}
