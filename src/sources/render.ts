import type { PackageSource, SourceEvent } from './types.ts';
import { TRUST_LABELS } from './types.ts';

const isoOrNull = (d: Date | null) => (d === null ? null : d.toISOString());

/** What both the record and the discovery list say of a source, in this order. */
function publicFields(s: PackageSource) {
  return {
    package_id: s.packageId,
    name: s.name,
    version: s.version,
    summary: s.summary,
    vendor: s.vendorName,
    vendor_name: s.vendorName,
    download_uri: s.downloadUri,
    sha256: s.sha256,
    trust: s.trust,
  };
}

/** The JSON form of a source record (docs/sources.md). */
export function renderSource(s: PackageSource): Record<string, unknown> {
  return {
    id: s.id,
    ...publicFields(s),
    trust_label: TRUST_LABELS[s.trust] ?? s.trust,
    risk: s.risk,
    status: s.status,
    stage: s.stage,
    reason: s.reason,
    live: s.live,
    findings: s.findings,
    commands: s.commands,
    registered_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    last_checked_at: isoOrNull(s.lastCheckAt),
    next_check_at:
      s.status === 'registered' || s.status === 'healthy' || s.status === 'dropped'
        ? s.nextCheckAt.toISOString()
        : null,
    links: { self: `/api/agpk/sources/${s.id}` },
  };
}

/** One recorded transition. */
export function renderEvent(e: SourceEvent): Record<string, unknown> {
  return { at: e.at.toISOString(), from: e.from, to: e.to, reason: e.reason };
}

/** An entry of the live discovery list (what `plaza agpk list-options` reads). */
export function renderShareEntry(s: PackageSource): Record<string, unknown> {
  return {
    ...publicFields(s),
    risk: s.risk,
    healthy_since: isoOrNull(s.liveSince),
  };
}
