import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { SourceFinding, SourceInspector } from '../../probes/index.ts';
import { AgpkError, type AgpkSchemas, type ExtractLimits, safeExtract, validatePackageDir } from '../agpk/index.ts';
import { archiveFindings as scanArchiveFile } from './package-scan.ts';
import { scanOffThread, verdictOf } from './scan.ts';

/**
 * The worker's inspector: safe extraction (an unsafe archive is a high-risk finding), the AGPK
 * validator as the command-surface gate (manifest id/version must match the registration), then
 * the open-source scan.
 */
export function createSourceInspector(options: {
  schemas: AgpkSchemas;
  denyList: ReadonlyMap<string, string>;
  limits: ExtractLimits;
}): SourceInspector {
  return async (archive, target) => {
    const archiveFindings = await scanArchiveFile(archive, options.denyList);
    const dir = await mkdtemp(join(tmpdir(), 'plaza-inspect-'));
    try {
      const root = join(dir, 'pkg');
      try {
        await safeExtract(archive, root, options.limits);
      } catch (error) {
        // An archive Plaza cannot unpack safely is a finding; a full disk is Plaza's own failure.
        if (!(error instanceof AgpkError) || error.code !== 'bad_request') throw error;
        const findings: SourceFinding[] = [
          ...archiveFindings,
          { id: 'archive.unsafe', severity: 'high', file: null, message: error.message },
        ];
        return { gateProblems: [], surfaceChecked: false, findings, risk: 'high', commands: [] };
      }
      const report = await validatePackageDir(root, options.schemas);
      const gateProblems = report.problems.map(
        (p) => `${p.file}${p.path && p.path !== '$' ? ` ${p.path}` : ''}: ${p.message}`,
      );
      if (report.package_id !== null && report.package_id !== target.packageId)
        gateProblems.push(`agpk.json id "${report.package_id}" is not the registered package_id "${target.packageId}"`);
      if (report.version !== null && report.version !== target.version)
        gateProblems.push(`agpk.json version "${report.version}" is not the registered version "${target.version}"`);
      if (gateProblems.length > 0)
        return {
          gateProblems,
          surfaceChecked: true,
          findings: archiveFindings,
          risk: verdictOf(archiveFindings),
          commands: [],
        };
      const findings = [...archiveFindings, ...(await scanOffThread(root, report.manifest, options.denyList))];
      // What the package page lists: each command's id and summary (cut short; they are publisher text).
      const commands = (report.commands ?? []).slice(0, 200).map((c) => ({
        id: String(c.id).slice(0, 128),
        summary: String(c.summary ?? c.description ?? '').slice(0, 500),
      }));
      return { gateProblems: [], surfaceChecked: true, findings, risk: verdictOf(findings), commands };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}
