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
const ENV_FILES = /(?:^|\/)(?:\.env(?:\.[\w-]+)?|\.npmrc|\.pypirc|\.netrc|credentials(?:\.json)?|\.git-credentials|id_(?:rsa|dsa|ecdsa|ed25519))$/i;

/** The highest severity among findings. */
export function verdictOf(findings: readonly SourceFinding[]): RiskVerdict {
  const order = ['info', 'low', 'medium', 'high'] as const;
  let max = -1;
  for (const f of findings) max = Math.max(max, order.indexOf(f.severity));
  return max <= 0 ? 'none' : (order[max] as RiskVerdict);
}

/**
 * Archive-level checks done before extraction: setuid/setgid bits (the extractor drops them, but
 * shipping them is an escalation attempt) and the deny-list digest of the archive itself.
 */
export async function scanArchive(archive: string, archiveSha256: string, denyList: ReadonlyMap<string, string>): Promise<SourceFinding[]> {
  const findings: SourceFinding[] = [];
  const denied = denyList.get(archiveSha256);
  if (denied) findings.push({ id: 'denylist.digest', severity: 'high', file: null, message: `the archive is on the deny-list (${denied})` });
  await list({
    file: archive,
    onReadEntry: (entry) => {
      const mode = entry.mode ?? 0;
      if (mode & 0o6000) findings.push({ id: 'archive.unsafe', severity: 'high', file: entry.path, message: `${entry.path} carries a setuid/setgid bit` });
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
export function scanOffThread(dir: string, manifest: AgpkManifest | undefined, denyList: ReadonlyMap<string, string>, limitMs = SCAN_TIME_LIMIT_MS): Promise<SourceFinding[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./scan-worker.ts', import.meta.url), { workerData: { dir, manifest, denyList } });
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve([{ id: 'scan.timeout', severity: 'high', file: null, message: `the scan did not finish within ${Math.round(limitMs / 1000)} s` }]);
    }, limitMs);
    const settle = () => clearTimeout(timer);
    worker.once('message', (findings: SourceFinding[]) => {
      settle();
      resolve(findings);
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
export async function scanPackageDir(dir: string, manifest: AgpkManifest | undefined, denyList: ReadonlyMap<string, string>): Promise<SourceFinding[]> {
  const findings: SourceFinding[] = [];
  const files = await walk(dir);
  const hooks = new Set(Object.values(manifest?.lifecycle ?? {}).filter((v): v is string => typeof v === 'string'));
  const hasLicense = files.some((f) => !f.includes('/') && LICENSE_FILES.test(f)) || typeof manifest?.['license'] === 'string';
  if (!hasLicense) findings.push({ id: 'license.missing', severity: 'low', file: null, message: 'no license file (LICENSE, COPYING) and no license in agpk.json' });

  for (const file of files) {
    const path = join(dir, file);
    const info = await stat(path);
    const bytes = await readFile(path);
    const digest = createHash('sha256').update(bytes).digest('hex');
    const denied = denyList.get(digest);
    if (denied) findings.push({ id: 'denylist.digest', severity: 'high', file, message: `${file} is on the deny-list (${denied})` });
    if (ENV_FILES.test(file)) findings.push({ id: 'secret.env-file', severity: /id_(?:rsa|dsa|ecdsa|ed25519)$/.test(file) ? 'high' : 'medium', file, message: `${file} looks like a credentials file` });
    if (info.size > MAX_SCANNED_BYTES) continue;
    const text = bytes.toString('latin1');
    for (const p of SECRET_PATTERNS) {
      if (p.pattern.test(text)) findings.push({ id: p.id, severity: 'high', file, message: `${file} contains ${p.what}` });
    }
    // One at a time: a hook of 4 MiB may have more findings than a spread call takes arguments.
    if (hooks.has(file) || (!file.includes('/') && SCRIPT_FILES.test(posix.basename(file)))) for (const f of scanHook(file, bytes.toString('utf8'))) findings.push(f);
  }
  return findings;
}
