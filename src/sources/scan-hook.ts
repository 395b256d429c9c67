/**
 * The rules of an install/uninstall hook, read line by line as `readHook` reads it:
 * download-and-execute, privilege escalation, writes outside the install root, and what
 * the behaviour reading finds (reverse shells, persistence, credentials read or sent, decoded code run).
 */
import type { SourceFinding } from '../../probes/index.ts';
import { type DownloadRun, readDownloadRuns } from './download-exec.ts';
import { type Behaviour, readBehaviours } from './hook-behaviours.ts';
import { EXPANDED_DOWNLOAD, INSTALL_RULES } from './install-rules.ts';
import { createCommandCache } from './internal/command-cache.ts';
import { inlineCode } from './internal/run-words.ts';
import { commandWords, MAX_NESTING, parseCommands } from './internal/shell-words.ts';
import { writesOutsideRoot } from './outside-root.ts';
import { evaluatedDownloads } from './program-rules.ts';
import { hookLanguage, readHook } from './read-hook.ts';

/**
 * The shell code a line hands to be read again, `depth` levels deep: an `eval`'s arguments, a
 * `sh -c` code. The rules read it as they read the line (`eval "cp t /usr/bin"` writes outside the
 * root). All of it together is no longer than the line (`budget`), so an `eval` chain is read twice, not once per level.
 */
function handedCode(text: string, depth = 0, budget = { left: text.length }): string[] {
  if (depth >= MAX_NESTING || !/\beval\b|-[a-z]*c\b/.test(text)) return [];
  const out: string[] = [];
  for (const c of parseCommands(text)) {
    const words = commandWords(c.words);
    const inline = inlineCode(words);
    const code =
      words[0] === 'eval' ? words.slice(1).join(' ') : inline?.language === 'shell' ? inline.code : undefined;
    if (code === undefined) continue;
    if ((budget.left -= code.length) < 0) break;
    out.push(code, ...handedCode(code, depth + 1, budget));
  }
  return out;
}

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
  /** The text a finding at line `i` quotes: the line, or all the lines one command spread over. */
  const shown = (i: number): string => {
    const span = hook[i]?.span ?? 0;
    return (
      span > 0
        ? lines
            .slice(i, i + span + 1)
            .map((l) => l.trim())
            .join(' ')
        : lines[i]!.trim()
    ).slice(0, 120);
  };
  const flag = (i: number, what: string): void => {
    const at = `${file}:${i + 1}`;
    findings.push({ id: 'install.download-exec', severity: 'high', file: at, message: `${at} ${what}: ${shown(i)}` });
  };
  for (const [i, line] of hook.entries()) {
    if (!line.text.trim()) continue;
    const at = `${file}:${i + 1}`;
    // The line, as an `eval` on it builds its code, and the code it hands on (`eval '…'`, `sh -c '…'`).
    const texts = line.program ? [line.text] : [line.text, ...(line.evaluated === undefined ? [] : [line.evaluated])];
    if (!line.program) texts.push(...texts.flatMap((t) => handedCode(t)));
    for (const rule of INSTALL_RULES) {
      if (texts.some((t) => rule.pattern.test(t)))
        findings.push({ id: rule.id, severity: 'high', file: at, message: `${at} ${rule.what}: ${shown(i)}` });
    }
    if (line.expandedCode && EXPANDED_DOWNLOAD.test(line.text))
      flag(i, 'expands a download into the code it feeds an interpreter');
    const targets = [...new Set(texts.flatMap((t) => writesOutsideRoot(t, line.program !== undefined)))];
    if (targets.length > 0)
      findings.push({
        id: 'install.outside-root',
        severity: 'high',
        file: at,
        message: `${at} writes outside $AGPK_INSTALL_ROOT (${targets.slice(0, 3).join(', ')})`,
      });
  }
  for (const i of evaluatedDownloads(hook))
    flag(i, `evaluates code in a ${hook[i]!.program!.language} program that downloads`);
  // The two readings of the hook's commands go line by line together, so each line is parsed once for both.
  const cache = createCommandCache();
  const downloadRuns = readDownloadRuns(hook, cache.parse);
  const behaviourReading = readBehaviours(hook, cache.parse);
  downloadRuns.next();
  behaviourReading.next();
  let runs: DownloadRun[] = [];
  let behaviours: Behaviour[] = [];
  for (let i = 0; i < hook.length; i++) {
    cache.clear();
    const run = downloadRuns.next();
    const behaviour = behaviourReading.next();
    if (run.done) runs = run.value;
    if (behaviour.done) behaviours = behaviour.value;
  }
  cache.clear();
  for (const b of behaviours) {
    const at = `${file}:${b.line + 1}`;
    findings.push({ id: b.id, severity: b.severity, file: at, message: `${at} ${b.what}: ${shown(b.line)}` });
  }
  const flagged = new Set(findings.filter((f) => f.id === 'install.download-exec').map((f) => f.file));
  for (const run of runs) {
    const at = `${file}:${run.line + 1}`;
    if (run.review) {
      findings.push({
        id: 'install.dynamic-command',
        severity: 'medium',
        file: at,
        message: `${at} ${run.how!}: ${shown(run.line)}`,
      });
      continue;
    }
    if (flagged.has(at)) continue;
    flagged.add(at);
    const what =
      run.how ??
      (run.archive === undefined
        ? `runs ${run.file}, which the hook downloaded`
        : `runs ${run.file}, from where the hook unpacked ${run.archive.slice(0, 120)}, which it downloaded`);
    findings.push({
      id: 'install.download-exec',
      severity: 'high',
      file: at,
      message: `${at} ${what}: ${shown(run.line)}`,
    });
  }
  return findings;
}
