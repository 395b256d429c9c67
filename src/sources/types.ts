import type { SourceFinding } from '../../probes/index.ts';

/** Trust of a registration (spec §2.10): anonymous web form, or a signed-in account. */
export type SourceTrust = 'risky-unknown' | 'known-user';

/** The labels the spec's list view shows for each trust value. */
export const TRUST_LABELS: Readonly<Record<SourceTrust, string>> = {
  'risky-unknown': 'risky-unknown provider',
  'known-user': 'known in-site user',
};

/** Every status a source can have (docs/sources.md). */
export const SOURCE_STATUSES = ['registered', 'healthy', 'rejected', 'discarded', 'dropped'] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

/** A package source record as the rest of Plaza sees it. */
export interface PackageSource {
  id: string;
  packageId: string;
  name: string;
  version: string;
  summary: string;
  vendorName: string;
  downloadUri: string;
  sha256: string;
  trust: SourceTrust;
  accountId: string | null;
  status: SourceStatus;
  stage: string;
  reason: string | null;
  findings: SourceFinding[];
  /** Commands of the package (id, summary), from the gate that passed. */
  commands: { id: string; summary: string }[];
  risk: string | null;
  live: boolean;
  liveSince: Date | null;
  lastCheckAt: Date | null;
  nextCheckAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** One recorded transition. */
export interface SourceEvent {
  at: Date;
  from: string | null;
  to: string;
  reason: string | null;
}

type Row = Omit<PackageSource, 'trust' | 'status' | 'findings' | 'commands'> & {
  trust: string;
  status: string;
  findings: unknown;
  commands: unknown;
};

/** Maps a database row to the domain type. */
export function toSource(row: Row): PackageSource {
  return {
    id: row.id,
    packageId: row.packageId,
    name: row.name,
    version: row.version,
    summary: row.summary,
    vendorName: row.vendorName,
    downloadUri: row.downloadUri,
    sha256: row.sha256,
    trust: row.trust as SourceTrust,
    accountId: row.accountId,
    status: row.status as SourceStatus,
    stage: row.stage,
    reason: row.reason,
    findings: Array.isArray(row.findings) ? (row.findings as SourceFinding[]) : [],
    commands: Array.isArray(row.commands) ? (row.commands as { id: string; summary: string }[]) : [],
    risk: row.risk,
    live: row.live,
    liveSince: row.liveSince,
    lastCheckAt: row.lastCheckAt,
    nextCheckAt: row.nextCheckAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
