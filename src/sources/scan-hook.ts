/**
 * The rules of an install/uninstall hook, read line by line as `readHook` reads it:
 * download-and-execute, privilege escalation, writes outside the install root.
 */
import type { SourceFinding } from '../../probes/index.ts';
import { downloadedThenRun } from './download-exec.ts';
import { INSTALL_RULES } from './install-rules.ts';
import { writesOutsideRoot } from './outside-root.ts';
import { readHook } from './read-hook.ts';

function stripComment(line: string): string {
  if (line.trimStart().startsWith('#')) return '';
  // Cut at the first ` #` (a `/\s#.*$/` replace retried every ` #` up to a lone \r: quadratic).
  const at = line.search(/\s#/);
  return at < 0 ? line : line.slice(0, at);
}

/** The findings of the hook `file` (its text `source`), each at `file:line`. */
export function scanHook(file: string, source: string): SourceFinding[] {
  const findings: SourceFinding[] = [];
  const lines = source.split(/\r?\n/);
  const hook = readHook(lines.map(stripComment));
  for (const [i, raw] of lines.entries()) {
    const line = hook[i]!;
    if (!line.trim()) continue;
    const at = `${file}:${i + 1}`;
    for (const rule of INSTALL_RULES) {
      if (rule.pattern.test(line)) findings.push({ id: rule.id, severity: 'high', file: at, message: `${at} ${rule.what}: ${raw.trim().slice(0, 120)}` });
    }
    const targets = writesOutsideRoot(line);
    if (targets.length > 0) findings.push({ id: 'install.outside-root', severity: 'high', file: at, message: `${at} writes outside $AGPK_INSTALL_ROOT (${targets.slice(0, 3).join(', ')})` });
  }
  const flagged = new Set(findings.filter((f) => f.id === 'install.download-exec').map((f) => f.file));
  for (const run of downloadedThenRun(hook)) {
    const at = `${file}:${run.line + 1}`;
    if (flagged.has(at)) continue;
    flagged.add(at);
    const what = run.archive === undefined ? `${run.file}, which the hook downloaded` : `${run.file}, from where the hook unpacked ${run.archive.slice(0, 120)}, which it downloaded`;
    findings.push({ id: 'install.download-exec', severity: 'high', file: at, message: `${at} runs ${what}: ${lines[run.line]!.trim().slice(0, 120)}` });
  }
  return findings;
}
