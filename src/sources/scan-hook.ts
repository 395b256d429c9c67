/**
 * The rules of an install/uninstall hook, read line by line as `readHook` reads it:
 * download-and-execute, privilege escalation, writes outside the install root.
 */
import type { SourceFinding } from '../../probes/index.ts';
import { downloadedThenRun } from './download-exec.ts';
import { EXPANDED_DOWNLOAD, INSTALL_RULES } from './install-rules.ts';
import { writesOutsideRoot } from './outside-root.ts';
import { evaluatedDownloads } from './program-rules.ts';
import { hookLanguage, readHook } from './read-hook.ts';

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
  const hook = readHook(lines, lines.map(stripComment), hookLanguage(file, lines[0] ?? ''));
  const flag = (i: number, what: string): void => {
    const at = `${file}:${i + 1}`;
    findings.push({ id: 'install.download-exec', severity: 'high', file: at, message: `${at} ${what}: ${lines[i]!.trim().slice(0, 120)}` });
  };
  for (const [i, line] of hook.entries()) {
    if (!line.text.trim()) continue;
    const at = `${file}:${i + 1}`;
    for (const rule of INSTALL_RULES) {
      if (rule.pattern.test(line.text)) findings.push({ id: rule.id, severity: 'high', file: at, message: `${at} ${rule.what}: ${lines[i]!.trim().slice(0, 120)}` });
    }
    if (line.expandedCode && EXPANDED_DOWNLOAD.test(line.text)) flag(i, 'expands a download into the code it feeds an interpreter');
    const targets = writesOutsideRoot(line.text, line.program !== undefined);
    if (targets.length > 0) findings.push({ id: 'install.outside-root', severity: 'high', file: at, message: `${at} writes outside $AGPK_INSTALL_ROOT (${targets.slice(0, 3).join(', ')})` });
  }
  for (const i of evaluatedDownloads(hook)) flag(i, `evaluates code in a ${hook[i]!.program!.language} program that downloads`);
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
