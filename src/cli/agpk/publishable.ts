/**
 * "Publishable", as `plaza agpk validate` and `pack` answer it: the AGPK validator's report plus
 * the market's own scan (src/sources), so a package the source worker would reject at its `scan`
 * stage is not called valid here. The two modules are combined in the CLI: src/sources already
 * builds on src/agpk, so src/agpk does not import it back.
 */
import type { SourceFinding } from '../../../probes/index.ts';
import type { ValidationReport } from '../../agpk/index.ts';
import type { Agpk } from '../agpk-support.ts';

/** The validator's report with the scan's findings; `ok` is false on any problem or high finding. */
export type PublishReport = ValidationReport & { sha256?: string; findings: SourceFinding[] };

/**
 * Validates `target` (a folder or an archive) and scans it as the market does, with Plaza's
 * built-in deny-list (a market's own additions are not known here).
 */
export async function checkPublishable(agpk: Agpk, target: string): Promise<PublishReport> {
  const report = await agpk.validateTarget(target, agpk.loadAgpkSchemas());
  const sources = await import('../../sources/index.ts');
  const findings = await sources.scanPackageTarget(target, { denyList: sources.loadDenyList(undefined) });
  return { ...report, ok: report.ok && !findings.some((f) => f.severity === 'high'), findings };
}

/** The report's problems, findings and warnings as the text output lists them, one a line. */
export function reportLines(r: PublishReport): string[] {
  const scan = (f: SourceFinding, level: string) => `  ${level} scan ${f.id}: ${f.message}`;
  return [
    ...r.problems.map((p) => `  error   ${p.file} ${p.path}: ${p.message}`),
    ...r.findings.filter((f) => f.severity === 'high').map((f) => scan(f, 'error  ')),
    ...r.warnings.map((p) => `  warning ${p.file} ${p.path}: ${p.message}`),
    ...r.findings.filter((f) => f.severity !== 'high').map((f) => scan(f, 'warning')),
  ];
}

/** Why a report is not publishable, in one line: its problems and the findings the market rejects. */
export function notPublishable(r: PublishReport): string {
  const high = r.findings.filter((f) => f.severity === 'high').length;
  return [
    ...(r.problems.length > 0 ? [`${r.problems.length} problem(s)`] : []),
    ...(high > 0 ? [`${high} high-risk scan finding(s), which the market rejects`] : []),
  ].join(', ');
}
