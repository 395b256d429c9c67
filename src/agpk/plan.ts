import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import type { AgpkSchemas } from './contract.ts';
import { sha256File, walkTree } from './digests.ts';
import { AgpkError } from './errors.ts';
import { type ExtractLimits, safeExtract } from './extract.ts';
import { stampFile } from './installed-files.ts';
import type { AgentCommand, AgpkManifest } from './manifest.ts';
import { downloadArchive, fetchMarketSources, type MarketSource } from './market.ts';
import type { FileStamp, InstalledPackage, Registry } from './registry.ts';
import { loadTrustedKeyIds } from './signing.ts';
import { validatePackageDir } from './validate.ts';
import { compareVersions } from './versions.ts';

/** What every package operation needs; built once by the caller (CLI, MCP tool, tests). */
export interface AgpkContext {
  registry: Registry;
  schemas: AgpkSchemas;
  /** Market base ({share_url}). */
  shareUrl: string;
  /** Version of this host, compared with `lifecycle.min_os`. */
  hostVersion: string;
  /** Extra CA certificate(s) (PEM) to trust for market and download requests. */
  ca?: string | Buffer;
  /** Public key files trusted for signatures, besides AGPK_HOME/trusted-keys/*.pem. */
  trustedKeyFiles?: string[];
  limits?: ExtractLimits;
  /** PATH, HOME… handed to hooks and commands. */
  baseEnv: Record<string, string | undefined>;
  onProgress?: (packageId: string, done: number, total: number | null) => void;
  /**
   * Cuts an install/upgrade short (the CLI's Ctrl-C): the download or hook in progress stops and
   * the operation fails with the signal's reason, undoing its work as on any other failure.
   */
  signal?: AbortSignal;
}

/** A package downloaded, extracted to a staging folder and validated, not installed yet. */
export interface StagedPackage {
  manifest: AgpkManifest;
  commands: AgentCommand[];
  stageDir: string;
  source: InstalledPackage['source'];
  signature: InstalledPackage['signature'];
  files: Record<string, string>;
  fileStats: Record<string, FileStamp>;
}

/** Staged packages in install order (dependencies first) and what to clean up afterwards. */
export interface Plan {
  order: StagedPackage[];
  scratch: string[];
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** What a market package_id may be (spec ids, as `scaffold` checks them): no path separator. */
const PACKAGE_ID = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/;

async function trustedKeyIds(ctx: AgpkContext): Promise<Set<string>> {
  const dir = ctx.registry.trustedKeysDir;
  const local = await readdir(dir).then(
    (names) => names.filter((n) => n.endsWith('.pem')).map((n) => join(dir, n)),
    () => [],
  );
  return loadTrustedKeyIds([...local, ...(ctx.trustedKeyFiles ?? [])]);
}

/**
 * Resolves `refs` (archive paths or market package ids) and their missing `depends` into a plan:
 * each archive is sha256-checked (against the market entry), safely extracted, validated and its
 * signature checked. Throws on the first package that cannot be installed; cleans up after itself
 * only through `plan.scratch` (the caller removes those).
 */
export async function preparePlan(
  ctx: AgpkContext,
  refs: string[],
  installed: Record<string, InstalledPackage>,
  plan: Plan,
): Promise<void> {
  let market: MarketSource[] | undefined;
  const trusted = await trustedKeyIds(ctx);
  const staged = new Map<string, StagedPackage>();

  const marketEntry = async (id: string): Promise<MarketSource> => {
    market ??= await fetchMarketSources(ctx.shareUrl, {
      ...(ctx.ca ? { ca: ctx.ca } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const found = market.filter((s) => s.package_id === id).sort((a, b) => compareVersions(b.version, a.version))[0];
    if (!found) {
      // `x.agpk` is a valid package_id, but most likely a file name that was mistyped.
      const noFile = id.endsWith('.agpk') ? `there is no file ${id} in ${process.cwd()}, and ` : '';
      throw new AgpkError(
        'not_found',
        `${noFile}package "${id}" is not in the market's healthy list (${ctx.shareUrl}/share/v1/agpk/sources); \`plaza agpk list-options --query <words>\` searches it`,
      );
    }
    return found;
  };

  /** `fromMarket`: a dependency, which names a package id, never a file on this machine. */
  const stage = async (ref: string, fromMarket = false): Promise<StagedPackage> => {
    ctx.signal?.throwIfAborted();
    const scratch = join(ctx.registry.tmpDir, `${Date.now()}-${randomBytes(6).toString('hex')}`);
    plan.scratch.push(scratch, `${scratch}.agpk`);
    let archive: string;
    let source: StagedPackage['source'];
    let expectedId: string | undefined;
    const file = !fromMarket && (await isFile(ref));
    if (!fromMarket && !file && !PACKAGE_ID.test(ref)) {
      // A path (or anything no package_id can be) is never looked up in the market.
      const what = await stat(ref).then(
        (s) =>
          s.isDirectory()
            ? 'is a folder, not an archive: pack it first (`plaza agpk pack <folder>`)'
            : 'is not a regular file',
        () => 'does not exist',
      );
      throw new AgpkError('not_found', `${ref} ${what}; install takes an .agpk archive file or a market package_id`);
    }
    if (file) {
      archive = resolve(ref);
      source = { kind: 'file', uri: archive, sha256: await sha256File(archive) };
    } else {
      const entry = await marketEntry(ref);
      archive = `${scratch}.agpk`;
      const { sha256 } = await downloadArchive(entry.download_uri, archive, {
        expectedSha256: entry.sha256,
        ...(ctx.ca ? { ca: ctx.ca } : {}),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        onProgress: (done, total) => ctx.onProgress?.(ref, done, total),
      });
      source = { kind: 'market', uri: entry.download_uri, sha256 };
      expectedId = ref;
    }
    await safeExtract(archive, scratch, ctx.limits);
    ctx.signal?.throwIfAborted();
    const report = await validatePackageDir(scratch, ctx.schemas);
    const label = report.package_id ?? ref;
    if (!report.ok || !report.manifest) {
      const first = report.problems[0];
      throw new AgpkError(
        'bad_request',
        `package ${label} is not valid: ${first ? `${first.file} ${first.path}: ${first.message}` : 'invalid'}`,
        { problems: report.problems },
      );
    }
    const manifest = report.manifest;
    if (expectedId !== undefined && manifest.id !== expectedId) {
      throw new AgpkError('bad_request', `the market entry "${expectedId}" delivered package "${manifest.id}"`);
    }
    const minOs = manifest.lifecycle?.min_os;
    if (minOs !== undefined && compareVersions(ctx.hostVersion, minOs) < 0) {
      throw new AgpkError(
        'bad_request',
        `package ${manifest.id} needs host version ${minOs} or newer (this host is ${ctx.hostVersion})`,
      );
    }
    if (staged.has(manifest.id)) throw new AgpkError('conflict', `package ${manifest.id} is requested twice`);
    const files: Record<string, string> = {};
    const fileStats: Record<string, FileStamp> = {};
    for (const f of await walkTree(scratch)) {
      if (f.kind !== 'file') continue;
      // Stamped before hashing: a change in between shows as a moved stamp, so invoke hashes it.
      const stamp = stampFile(join(scratch, f.path));
      if (stamp) fileStats[f.path] = stamp;
      files[f.path] = await sha256File(join(scratch, f.path));
    }
    const kid = report.signature_kid;
    const pkg: StagedPackage = {
      manifest,
      commands: report.commands ?? [],
      stageDir: scratch,
      source,
      signature: { signed: report.signed, trusted: kid !== null && trusted.has(kid), kid },
      files,
      fileStats,
    };
    staged.set(manifest.id, pkg);
    return pkg;
  };

  // The packages asked for first, then their missing dependencies from the market.
  for (const ref of refs) await stage(ref);
  const queue = [...staged.values()];
  while (queue.length > 0) {
    const pkg = queue.shift()!;
    for (const dep of pkg.manifest.depends ?? []) {
      if (installed[dep] || staged.has(dep)) continue;
      queue.push(await stage(dep, true));
    }
  }
  // Dependencies before their dependents; a cycle among new packages is refused.
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (pkg: StagedPackage, path: string[]): void => {
    const id = pkg.manifest.id;
    if (state.get(id) === 'done') return;
    if (state.get(id) === 'visiting')
      throw new AgpkError('conflict', `dependency cycle: ${[...path, id].join(' -> ')}`);
    state.set(id, 'visiting');
    for (const dep of pkg.manifest.depends ?? []) {
      const next = staged.get(dep);
      if (next) visit(next, [...path, id]);
    }
    state.set(id, 'done');
    plan.order.push(pkg);
  };
  for (const pkg of staged.values()) visit(pkg, []);
}

/**
 * Refuses plans that clash with what is installed: `conflicts` either way, and command ids that
 * another package already provides. `replacing` is the package an upgrade replaces.
 */
export function checkPlanConflicts(plan: Plan, installed: Record<string, InstalledPackage>, replacing?: string): void {
  const present = new Map<string, { conflicts: string[]; commands: string[] }>();
  for (const [id, p] of Object.entries(installed))
    if (id !== replacing) present.set(id, { conflicts: p.conflicts, commands: p.commands.map((c) => c.id) });
  for (const s of plan.order) {
    const id = s.manifest.id;
    for (const c of s.manifest.conflicts ?? []) {
      if (present.has(c)) throw new AgpkError('conflict', `package ${id} conflicts with installed package ${c}`);
    }
    for (const [otherId, other] of present) {
      if (other.conflicts.includes(id))
        throw new AgpkError('conflict', `installed package ${otherId} conflicts with ${id}`);
      const clash = s.commands.find((c) => other.commands.includes(c.id));
      if (clash) throw new AgpkError('conflict', `command id "${clash.id}" of ${id} is already provided by ${otherId}`);
    }
    present.set(id, { conflicts: s.manifest.conflicts ?? [], commands: s.commands.map((c) => c.id) });
  }
}
