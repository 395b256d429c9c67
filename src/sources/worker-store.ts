import {
  MAX_DEAD_REPROBES,
  type PassedStep,
  type SourceOutcome,
  type SourceStore,
  type SourceTarget,
} from '../../probes/index.ts';
import { compareVersions } from '../agpk/index.ts';
import { claimDueRows, claimRow, type LeasedTable, type PrismaClient } from '../db/index.ts';
import { storableJson } from '../kernel/index.ts';
import { ownedElsewhere, packageOwner } from './source-service.ts';
import type { PackageSource } from './types.ts';
import { toSource } from './types.ts';

interface TargetRow {
  id: string;
  package_id: string;
  version: string;
  download_uri: string;
  sha256: string;
  trust: string;
  status: string;
  attempts: number;
  /** The lease's owner before this claim (row-leases.ts). */
  prior_owner: string | null;
}

const SOURCES: LeasedTable = {
  table: '"package_sources"',
  dueColumn: '"next_check_at"',
  workable: `"status" IN ('registered', 'healthy', 'dropped')`,
  returning:
    'RETURNING t."id", t."package_id", t."version", t."download_uri", t."sha256", t."trust", t."status", t."attempts", claimed."prior_owner"',
};
/**
 * A lease that ended while its owner still held it (another owner's: ours was a result we could
 * not store) means that owner stopped in the middle of the check.
 */
const toTarget = (r: TargetRow, owner: string): SourceTarget => ({
  id: r.id,
  packageId: r.package_id,
  version: r.version,
  downloadUri: r.download_uri,
  sha256: r.sha256,
  trust: r.trust === 'known-user' ? 'known-user' : 'risky-unknown',
  status: r.status as SourceTarget['status'],
  attempts: Number(r.attempts),
  abandoned: r.prior_owner !== null && r.prior_owner !== owner,
});

/** Called after a known user's source was rejected (the registrant gets a system e-mail). */
export type RejectionNotifier = (source: PackageSource) => Promise<void>;

/**
 * The source worker's storage. Leases live on the row and are taken with `FOR UPDATE SKIP
 * LOCKED`; promotion to live runs in a transaction under an advisory lock per package_id, so
 * two versions finishing at once still leave one live row.
 */
export function createSourceStore(deps: {
  prisma: PrismaClient;
  recheckMs: number;
  notifyRejected: RejectionNotifier;
}): SourceStore {
  const { prisma, recheckMs } = deps;

  async function events(
    id: string,
    from: string,
    steps: PassedStep[],
    final?: { to: string; reason: string; at: number },
  ) {
    const rows: { sourceId: string; at: Date; fromStatus: string; toStatus: string; reason: string }[] = steps.map(
      (s, i) => ({
        sourceId: id,
        at: new Date(s.at),
        fromStatus: i === 0 ? from : steps[i - 1]!.to,
        toStatus: s.to,
        reason: s.reason,
      }),
    );
    if (final)
      rows.push({
        sourceId: id,
        at: new Date(final.at),
        fromStatus: steps.at(-1)?.to ?? from,
        toStatus: final.to,
        reason: final.reason,
      });
    if (rows.length > 0) await prisma.packageSourceEvent.createMany({ data: rows });
  }

  /**
   * Writes the outcome and frees the lease, only while the row is still ours and in the state we
   * read (a newer version may have superseded it meanwhile). False when it was not.
   */
  async function release(target: SourceTarget, owner: string, data: Record<string, unknown>): Promise<boolean> {
    const { count } = await prisma.packageSource.updateMany({
      where: { id: target.id, leaseOwner: owner, status: target.status },
      data: { ...data, leaseOwner: null, leaseUntil: null },
    });
    if (count === 0)
      await prisma.packageSource.updateMany({
        where: { id: target.id, leaseOwner: owner },
        data: { leaseOwner: null, leaseUntil: null },
      });
    return count === 1;
  }

  async function promote(
    owner: string,
    target: SourceTarget,
    outcome: Extract<SourceOutcome, { kind: 'passed' }>,
    now: number,
  ): Promise<string> {
    const at = new Date(now);
    const result = await prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`plaza.package_sources.${target.packageId}`}, 0))::text AS locked`;
      const common = {
        findings: outcome.findings as object[],
        commands: outcome.commands as object[],
        risk: outcome.risk,
        lastCheckAt: at,
        attempts: 0,
        leaseOwner: null,
        leaseUntil: null,
      };
      // The package_id may have become another account's since this source was registered (see
      // packageOwner): then it goes no further.
      const publisher = await packageOwner(tx, target.packageId);
      const registrant =
        (await tx.packageSource.findUnique({ where: { id: target.id }, select: { accountId: true } }))?.accountId ??
        null;
      if (publisher !== null && publisher !== registrant) {
        const reason = ownedElsewhere(target.packageId).message;
        await tx.packageSource.update({
          where: { id: target.id },
          data: { ...common, status: 'discarded', stage: 'ownership', reason, live: false },
        });
        return { status: 'discarded', superseded: [] as { id: string; from: string }[], reason };
      }
      const live = await tx.packageSource.findMany({
        where: { packageId: target.packageId, live: true, id: { not: target.id } },
      });
      // Same version registered again (a new mirror, say): the newer registration takes over.
      const newer = live.find((l) => compareVersions(l.version, target.version) > 0);
      if (newer) {
        const reason = `superseded: version ${newer.version} of ${target.packageId} is already live`;
        await tx.packageSource.update({
          where: { id: target.id },
          data: { ...common, status: 'discarded', stage: 'superseded', reason, live: false },
        });
        return { status: 'discarded', superseded: [] as { id: string; from: string }[], reason };
      }
      for (const old of live) {
        await tx.packageSource.update({
          where: { id: old.id },
          data: {
            status: 'discarded',
            stage: 'superseded',
            live: false,
            reason: `superseded by version ${target.version} (${target.id})`,
          },
        });
      }
      await tx.packageSource.update({
        where: { id: target.id },
        data: {
          ...common,
          status: 'healthy',
          stage: 'live',
          reason: null,
          live: true,
          liveSince: at,
          nextCheckAt: new Date(now + recheckMs),
        },
      });
      return {
        status: 'healthy',
        superseded: live.map((l) => ({ id: l.id, from: l.status })),
        reason: 'passed every gate; discoverable',
      };
    });
    await events(target.id, target.status, outcome.steps, { to: result.status, reason: result.reason, at: now });
    if (result.superseded.length > 0) {
      await prisma.packageSourceEvent.createMany({
        data: result.superseded.map((s) => ({
          sourceId: s.id,
          at,
          fromStatus: s.from,
          toStatus: 'discarded',
          reason: `superseded by version ${target.version} (${target.id})`,
        })),
      });
    }
    return result.status;
  }

  const current = async (id: string) =>
    (await prisma.packageSource.findUnique({ where: { id }, select: { status: true } }))?.status ?? 'missing';

  return {
    async claimDue(owner, now, leaseMs, limit) {
      return (await claimDueRows<TargetRow>(prisma, SOURCES, owner, now, leaseMs, limit)).map((r) =>
        toTarget(r, owner),
      );
    },

    async claimOne(id, owner, now, leaseMs) {
      const row = await claimRow<TargetRow>(prisma, SOURCES, id, owner, now, leaseMs, false);
      return row ? toTarget(row, owner) : undefined;
    },

    async renew(id, owner, until) {
      await prisma.packageSource.updateMany({
        where: { id, leaseOwner: owner },
        data: { leaseUntil: new Date(until) },
      });
    },

    async markStage(id, owner, stage) {
      await prisma.packageSource.updateMany({ where: { id, leaseOwner: owner }, data: { stage } });
    },

    async record(owner, target, given, now) {
      // Reasons, findings and command summaries quote the publisher's files: NUL or a cut
      // surrogate pair there failed every write of this source's result, for good.
      const outcome = storableJson(given) as SourceOutcome;
      const at = new Date(now);
      switch (outcome.kind) {
        case 'passed': {
          if (target.status === 'healthy') {
            return (await release(target, owner, {
              lastCheckAt: at,
              nextCheckAt: new Date(now + recheckMs),
              attempts: 0,
              findings: outcome.findings as object[],
              risk: outcome.risk,
            }))
              ? 'healthy'
              : current(target.id);
          }
          return promote(owner, target, outcome, now);
        }
        case 'retry': {
          if (
            !(await release(target, owner, {
              attempts: target.attempts + 1,
              nextCheckAt: new Date(outcome.retryAt),
              lastCheckAt: at,
              reason: `probe failed, retrying: ${outcome.reason}`,
            }))
          )
            return current(target.id);
          await events(target.id, target.status, [], {
            to: target.status,
            reason: `probe failed (attempt ${target.attempts + 1}), retrying: ${outcome.reason}`,
            at: now,
          });
          return target.status;
        }
        case 'dead': {
          const attempts = target.status === 'healthy' ? 1 : target.attempts + 1;
          const status = attempts >= MAX_DEAD_REPROBES ? 'discarded' : 'dropped';
          const reason =
            status === 'discarded' ? `${outcome.reason} (dead on ${attempts} re-probes in a row)` : outcome.reason;
          if (
            !(await release(target, owner, {
              status,
              stage: 'reprobe',
              live: false,
              reason,
              attempts,
              lastCheckAt: at,
              nextCheckAt: new Date(outcome.retryAt),
            }))
          )
            return current(target.id);
          if (status !== target.status) await events(target.id, target.status, [], { to: status, reason, at: now });
          return status;
        }
        case 'drift': {
          if (
            !(await release(target, owner, {
              status: 'discarded',
              stage: 'reprobe',
              live: false,
              reason: outcome.reason,
              lastCheckAt: at,
            }))
          )
            return current(target.id);
          await events(target.id, target.status, [], { to: 'discarded', reason: outcome.reason, at: now });
          return 'discarded';
        }
        case 'failed': {
          const status = target.trust === 'known-user' ? 'rejected' : 'discarded';
          const released = await release(target, owner, {
            status,
            stage: outcome.stage,
            live: false,
            reason: outcome.reason,
            findings: outcome.findings as object[],
            risk: outcome.risk,
            lastCheckAt: at,
          });
          if (!released) return current(target.id);
          await events(target.id, target.status, outcome.steps, { to: status, reason: outcome.reason, at: now });
          if (status === 'rejected') {
            const row = await prisma.packageSource.findUnique({ where: { id: target.id } });
            if (row) await deps.notifyRejected(toSource(row));
          }
          return status;
        }
      }
    },
  };
}
