import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { Worker } from 'node:worker_threads';

import { list } from 'tar';

import type { RiskVerdict, SourceFinding } from '../../probes/index.ts';
import type { AgpkManifest } from '../agpk/index.ts';
import { scanHook } from './scan-hook.ts';
import { SECRET_PATTERNS } from './secret-patterns.ts';

/** Text files larger than this are hashed but not searched for secrets. */
const MAX_SCANNED_BYTES = 4 * 1024 * 1024;
const LICENSE_FILES = /^(?:LICEN[CS]E|COPYING|UNLICENSE)(?:[.-][A-Za-z0-9.]+)?$/i;
const SCRIPT_FILES = /^(?:INSTALL|UNINSTALL|UPGRADE|PREINSTALL|POSTINSTALL)(?:\.[a-z0-9]+)?$/i;
const ENV_FILES =
  /(?:^|\/)(?:\.env(?:\.[\w-]+)?|\.npmrc|\.pypirc|\.netrc|credentials(?:\.json)?|\.git-credentials|id_(?:rsa|dsa|ecdsa|ed25519))$/i;

/** Findings of one kind in one file listed one by one; the rest are counted in one more. */
const LISTED_PER_FILE = 20;
/** Findings listed in all (a package of many files, each with a finding); the rest are counted per kind. */
const LISTED_IN_ALL = 500;
const SEVERITY_ORDER = ['info', 'low', 'medium', 'high'] as const;

/**
 * The findings as they are stored, shown and sent by e-mail: a hook with a dangerous line on each
 * of its 100,000 lines, or a package of 10,000 files each with a secret, would otherwise make a
 * finding each. The first LISTED_PER_FILE of a kind in a file are listed, then one finding of the
 * same kind counts the rest of them; past LISTED_IN_ALL, one finding per kind counts those left.
 * A count carries the highest severity among what it counts, so the verdict is the one the whole
 * list has.
 */
function listed(findings: readonly SourceFinding[]): SourceFinding[] {
  const groups = new Map<
    string,
    { count: number; first: SourceFinding; path: string | null; severity: SourceFinding['severity'] }
  >();
  const kept: Array<{ finding: SourceFinding; stands: number }> = [];
  for (const f of findings) {
    // A hook's findings name the line (`INSTALL:12`): they are grouped by the file.
    const path = f.file?.replace(/:\d+$/, '') ?? null;
    const key = `${f.id}\n${path ?? ''}`;
    const group = groups.get(key);
    if (!group) groups.set(key, { count: 1, first: f, path, severity: 'info' });
    else {
      group.count++;
      if (group.count > LISTED_PER_FILE) group.severity = higher(group.severity, f.severity);
    }
    if ((group?.count ?? 1) <= LISTED_PER_FILE) kept.push({ finding: f, stands: 1 });
  }
  for (const { count, first, path, severity } of groups.values()) {
    if (count <= LISTED_PER_FILE) continue;
    const where = path === null ? '' : ` in ${path}`;
    const more = count - LISTED_PER_FILE;
    kept.push({
      finding: {
        id: first.id,
        severity,
        file: path,
        message: `and ${more} more ${first.id} findings${where}, not listed`,
      },
      stands: more,
    });
  }
  const out = kept.slice(0, LISTED_IN_ALL).map((k) => k.finding);
  if (kept.length <= LISTED_IN_ALL) return out;
  const rest = new Map<string, { count: number; severity: SourceFinding['severity'] }>();
  for (const { finding, stands } of kept.slice(LISTED_IN_ALL)) {
    const group = rest.get(finding.id);
    if (!group) rest.set(finding.id, { count: stands, severity: finding.severity });
    else {
      group.count += stands;
      group.severity = higher(group.severity, finding.severity);
    }
  }
  for (const [id, { count, severity }] of rest)
    out.push({ id, severity, file: null, message: `and ${count} more ${id} findings, not listed` });
  return out;
}

function higher(a: SourceFinding['severity'], b: SourceFinding['severity']): SourceFinding['severity'] {
  return SEVERITY_ORDER.indexOf(b) > SEVERITY_ORDER.indexOf(a) ? b : a;
}

/** The highest severity among findings. */
export function verdictOf(findings: readonly SourceFinding[]): RiskVerdict {
  let max = -1;
  for (const f of findings) max = Math.max(max, SEVERITY_ORDER.indexOf(f.severity));
  return max <= 0 ? 'none' : (SEVERITY_ORDER[max] as RiskVerdict);
}

/**
 * Archive-level checks done before extraction: setuid/setgid bits (the extractor drops them, but
 * shipping them is an escalation attempt) and the deny-list digest of the archive itself.
 */
export async function scanArchive(
  archive: string,
  archiveSha256: string,
  denyList: ReadonlyMap<string, string>,
): Promise<SourceFinding[]> {
  const findings: SourceFinding[] = [];
  const denied = denyList.get(archiveSha256);
  if (denied)
    findings.push({
      id: 'denylist.digest',
      severity: 'high',
      file: null,
      message: `the archive is on the deny-list (${denied})`,
    });
  await list({
    file: archive,
    onReadEntry: (entry) => {
      const mode = entry.mode ?? 0;
      if (mode & 0o6000)
        findings.push({
          id: 'archive.unsafe',
          severity: 'high',
          file: entry.path,
          message: `${entry.path} carries a setuid/setgid bit`,
        });
      entry.resume();
    },
  });
  return findings;
}

async function walk(root: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
    const path = rel ? posix.join(rel, e.name) : e.name;
    if (e.isDirectory()) out.push(...(await walk(root, path)));
    else if (e.isFile()) out.push(path);
  }
  return out.sort();
}

/** How long a scan off the event loop may take before it is stopped (and its package not trusted). */
const SCAN_TIME_LIMIT_MS = 120_000;

/**
 * {@link scanPackageDir} on a worker thread, so the server's event loop never waits for a package's
 * text; a scan that outlasts `limitMs` is stopped and answered with a high finding. The exit
 * that follows an answer or an error changes nothing (a promise settles once).
 */
export function scanOffThread(
  dir: string,
  manifest: AgpkManifest | undefined,
  denyList: ReadonlyMap<string, string>,
  limitMs = SCAN_TIME_LIMIT_MS,
): Promise<SourceFinding[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./scan-worker.ts', import.meta.url), {
      workerData: { dir, manifest, denyList },
    });
    const timer = setTimeout(() => {
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- terminate only fulfils (with the exit code)
      void worker.terminate();
      resolve([
        {
          id: 'scan.timeout',
          severity: 'high',
          file: null,
          message: `the scan did not finish within ${Math.round(limitMs / 1000)} s`,
        },
      ]);
    }, limitMs);
    const settle = () => clearTimeout(timer);
    worker.once('message', (findings: SourceFinding[]) => {
      settle();
      resolve(findings);
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- as above
      void worker.terminate();
    });
    // A thread that cannot run the scan (a Node that cannot load TypeScript there, say) leaves it
    // to this one, which answers as the scan answers (its findings, or its error).
    worker.once('error', () => {
      settle();
      scanPackageDir(dir, manifest, denyList).then(resolve, reject);
    });
    worker.once('exit', (code) => {
      settle();
      reject(new Error(`the scan's thread exited (code ${code}) without an answer`));
    });
  });
}

/**
 * The open-source scan of an extracted, command-surface-valid package: committed secrets,
 * dangerous install/uninstall steps, a license, and known-bad digests of its files. Pure
 * reading: nothing in the package is executed.
 */
export async function scanPackageDir(
  dir: string,
  manifest: AgpkManifest | undefined,
  denyList: ReadonlyMap<string, string>,
): Promise<SourceFinding[]> {
  const findings: SourceFinding[] = [];
  const files = await walk(dir);
  const hooks = new Set(Object.values(manifest?.lifecycle ?? {}).filter((v): v is string => typeof v === 'string'));
  const hasLicense =
    files.some((f) => !f.includes('/') && LICENSE_FILES.test(f)) || typeof manifest?.['license'] === 'string';
  if (!hasLicense)
    findings.push({
      id: 'license.missing',
      severity: 'low',
      file: null,
      message: 'no license file (LICENSE, COPYING) and no license in agpk.json',
    });

  for (const file of files) {
    const path = join(dir, file);
    const info = await stat(path);
    const bytes = await readFile(path);
    const digest = createHash('sha256').update(bytes).digest('hex');
    const denied = denyList.get(digest);
    if (denied)
      findings.push({
        id: 'denylist.digest',
        severity: 'high',
        file,
        message: `${file} is on the deny-list (${denied})`,
      });
    if (ENV_FILES.test(file))
      findings.push({
        id: 'secret.env-file',
        severity: /id_(?:rsa|dsa|ecdsa|ed25519)$/.test(file) ? 'high' : 'medium',
        file,
        message: `${file} looks like a credentials file`,
      });
    if (info.size > MAX_SCANNED_BYTES) continue;
    const text = bytes.toString('latin1');
    for (const p of SECRET_PATTERNS) {
      if (p.pattern.test(text))
        findings.push({ id: p.id, severity: 'high', file, message: `${file} contains ${p.what}` });
    }
    // One at a time: a hook of 4 MiB may have more findings than a spread call takes arguments.
    if (hooks.has(file) || (!file.includes('/') && SCRIPT_FILES.test(posix.basename(file))))
      for (const f of scanHook(file, bytes.toString('utf8'))) findings.push(f);
  }
  return listed(findings);
}
