import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

import { type Approval, obtainApproval, type OperationSummary, summarise } from './approval.ts';
import { AgpkError } from './errors.ts';
import { previewHook } from './hook-preview.ts';
import { runHook } from './hooks.ts';
import { installedChanges } from './installed-files.ts';
import { type AgpkContext, checkPlanConflicts, type Plan, preparePlan, type StagedPackage } from './plan.ts';
import type { InstalledPackage } from './registry.ts';
import { compareVersions } from './versions.ts';

/** What an install, upgrade or remove did. */
export interface OperationResult {
  action: OperationSummary['action'];
  changed: boolean;
  packages: Array<{ package_id: string; version: string; install_dir?: string }>;
  message: string;
}

function record(s: StagedPackage, installDir: string, now: string): InstalledPackage {
  return {
    package_id: s.manifest.id,
    name: s.manifest.name,
    version: s.manifest.version,
    description: s.manifest.description ?? null,
    install_dir: installDir,
    installed_at: now,
    source: s.source,
    signature: s.signature,
    depends: s.manifest.depends ?? [],
    conflicts: s.manifest.conflicts ?? [],
    lifecycle: s.manifest.lifecycle ?? {},
    files: s.files,
    file_stats: s.fileStats,
    commands: s.commands,
  };
}

async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await rmdir(join(dir, '..')).catch(() => {});
}

async function withPlan<T>(fn: (plan: Plan) => Promise<T>): Promise<T> {
  const plan: Plan = { order: [], scratch: [] };
  try {
    return await fn(plan);
  } finally {
    await Promise.all(plan.scratch.map((p) => rm(p, { recursive: true, force: true })));
  }
}

/**
 * Moves staged packages into place in order, runs their hooks, then records them all in one atomic
 * registry write (the commit point). Any failure undoes what this call did: completed packages get
 * their UNINSTALL (best effort), folders are removed, the registry stays as it was. An
 * interruption (`ctx.signal`) before the registry write is such a failure.
 */
async function commit(ctx: AgpkContext, plan: Plan, replacing?: InstalledPackage): Promise<InstalledPackage[]> {
  const data = await ctx.registry.read();
  const done: Array<{ s: StagedPackage; dir: string; hooked: boolean }> = [];
  const now = new Date().toISOString();
  try {
    for (const s of plan.order) {
      ctx.signal?.throwIfAborted();
      const id = s.manifest.id;
      const dir = join(ctx.registry.packagesDir, id, s.manifest.version);
      // A folder that the registry does not list is left over from a crash: replace it.
      if (data.packages[id]?.install_dir !== dir) await rm(dir, { recursive: true, force: true });
      await mkdir(join(ctx.registry.packagesDir, id), { recursive: true });
      await rename(s.stageDir, dir);
      const entry = { s, dir, hooked: false };
      done.push(entry);
      const upgrading = replacing?.package_id === id;
      await runHook(
        dir,
        id,
        s.manifest.version,
        s.manifest.lifecycle,
        upgrading ? 'upgrade' : 'install',
        ctx.baseEnv,
        {
          ...(upgrading ? { AGPK_PREVIOUS_VERSION: replacing.version, AGPK_PREVIOUS_ROOT: replacing.install_dir } : {}),
        },
        ctx.signal,
      );
      entry.hooked = true;
      // invoke checks the package's own files against what was installed: a hook that changed
      // them would leave a package no command of which runs. Hooks may add files, not change these.
      const changes = await installedChanges({ install_dir: dir, files: s.files, file_stats: s.fileStats });
      const touched = [...changes.changed, ...changes.missing.map((f) => `${f} (removed)`)];
      if (touched.length > 0) {
        const hook = upgrading ? 'upgrade' : 'install';
        throw new AgpkError(
          'bad_request',
          `the ${hook} hook of ${id} changed files the package ships (${touched.slice(0, 5).join(', ')}${touched.length > 5 ? ', …' : ''}); a hook may add files beside them but not change them, since invoke runs only what was installed`,
        );
      }
    }
    // Past this point the operation completes: an interruption no longer undoes it.
    ctx.signal?.throwIfAborted();
    const records = done.map(({ s, dir }) => record(s, dir, now));
    for (const r of records) data.packages[r.package_id] = r;
    await ctx.registry.write(data);
    return records;
  } catch (error) {
    for (const { s, dir, hooked } of done.reverse()) {
      if (hooked && replacing?.package_id !== s.manifest.id) {
        await runHook(dir, s.manifest.id, s.manifest.version, s.manifest.lifecycle, 'uninstall', ctx.baseEnv).catch(
          () => {},
        );
      }
      await removeDir(dir);
    }
    throw error;
  }
}

/**
 * Installs packages given as archive paths or market package ids (spec §4.4 `install`): resolves
 * depends, refuses conflicts, asks for approval, then commits (see commit). Holds the registry lock.
 */
export async function installPackages(ctx: AgpkContext, refs: string[], approval: Approval): Promise<OperationResult> {
  return ctx.registry.locked(() =>
    withPlan(async (plan) => {
      const { packages } = await ctx.registry.read();
      await preparePlan(ctx, refs, packages, plan);
      for (const s of plan.order) {
        const current = packages[s.manifest.id];
        if (current) {
          throw new AgpkError(
            'conflict',
            `${s.manifest.id} ${current.version} is already installed${
              current.version === s.manifest.version
                ? `; to install it afresh (say \`plaza agpk verify\` found it MODIFIED): \`plaza agpk remove ${s.manifest.id} --approve\`, then install again`
                : `; use \`plaza agpk upgrade ${s.manifest.id}\``
            }`,
          );
        }
      }
      checkPlanConflicts(plan, packages);
      await obtainApproval(await summarise('install', plan.order), approval);
      const records = await commit(ctx, plan);
      return {
        action: 'install',
        changed: true,
        packages: records.map((r) => ({ package_id: r.package_id, version: r.version, install_dir: r.install_dir })),
        message: `installed ${records.map((r) => `${r.package_id}@${r.version}`).join(', ')}`,
      };
    }),
  );
}

/** Upgrades an installed package to the market's version (or to the archive `file`). */
export async function upgradePackage(
  ctx: AgpkContext,
  packageId: string,
  approval: Approval,
  file?: string,
): Promise<OperationResult> {
  return ctx.registry.locked(() =>
    withPlan(async (plan) => {
      const { packages } = await ctx.registry.read();
      const current = packages[packageId];
      if (!current) throw new AgpkError('not_found', `${packageId} is not installed`);
      await preparePlan(ctx, [file ?? packageId], packages, plan);
      const next = plan.order.find((s) => s.manifest.id === packageId);
      if (!next)
        throw new AgpkError(
          'bad_request',
          `the archive holds ${plan.order.map((s) => s.manifest.id).join(', ')}, not ${packageId}`,
        );
      const cmp = compareVersions(next.manifest.version, current.version);
      if (cmp === 0)
        return {
          action: 'upgrade',
          changed: false,
          packages: [{ package_id: packageId, version: current.version }],
          message: `${packageId} ${current.version} is up to date`,
        };
      if (cmp < 0)
        throw new AgpkError(
          'conflict',
          `${next.manifest.version} is older than the installed ${packageId} ${current.version}`,
        );
      checkPlanConflicts(plan, packages, packageId);
      await obtainApproval(
        await summarise('upgrade', plan.order, { id: packageId, version: current.version }),
        approval,
      );
      const records = await commit(ctx, plan, current);
      await removeDir(current.install_dir).catch(() => {});
      return {
        action: 'upgrade',
        changed: true,
        packages: records.map((r) => ({ package_id: r.package_id, version: r.version, install_dir: r.install_dir })),
        message: `upgraded ${packageId} ${current.version} -> ${next.manifest.version}`,
      };
    }),
  );
}

/**
 * Removes an installed package: refuses while others depend on it, asks for approval, runs
 * UNINSTALL. A failing UNINSTALL stops the removal, unless `force`: then the package is removed
 * anyway and the message says how its hook failed (else a broken hook kept it installed for good).
 */
export async function removePackage(
  ctx: AgpkContext,
  packageId: string,
  approval: Approval,
  options: { force?: boolean } = {},
): Promise<OperationResult> {
  return ctx.registry.locked(async () => {
    const data = await ctx.registry.read();
    const current = data.packages[packageId];
    if (!current) throw new AgpkError('not_found', `${packageId} is not installed`);
    const dependents = Object.values(data.packages)
      .filter((p) => p.depends.includes(packageId))
      .map((p) => p.package_id);
    if (dependents.length > 0)
      throw new AgpkError(
        'conflict',
        `${packageId} is needed by ${dependents.join(', ')}; remove ${dependents.length === 1 ? 'it' : 'them'} first`,
      );
    await obtainApproval(
      {
        action: 'remove',
        packages: [
          {
            package_id: current.package_id,
            name: current.name,
            version: current.version,
            vendor: null,
            source: current.source.uri,
            sha256: current.source.sha256,
            signed: current.signature.signed,
            trusted_signature: current.signature.trusted,
            signature_kid: current.signature.kid,
            commands: current.commands.map((c) => c.id),
            depends: current.depends,
            hooks: await previewHook(current.install_dir, current.lifecycle, 'uninstall').then((h) => (h ? [h] : [])),
          },
        ],
      },
      approval,
    );
    let hookFailure: string | undefined;
    try {
      await runHook(
        current.install_dir,
        packageId,
        current.version,
        current.lifecycle,
        'uninstall',
        ctx.baseEnv,
        {},
        ctx.signal,
      );
    } catch (error) {
      // Interrupted, the package stays installed, even with force.
      ctx.signal?.throwIfAborted();
      if (!options.force) {
        if (!(error instanceof AgpkError)) throw error;
        throw new AgpkError(
          error.code,
          `${error.message}; ${packageId} stays installed (\`plaza agpk remove ${packageId} --approve --force\` removes it anyway)`,
          { cause: error, problems: error.problems },
        );
      }
      hookFailure = error instanceof Error ? error.message : String(error);
    }
    delete data.packages[packageId];
    await ctx.registry.write(data);
    await removeDir(current.install_dir);
    const message = `removed ${packageId} ${current.version}${hookFailure ? ` (forced: its UNINSTALL failed: ${hookFailure})` : ''}`;
    return {
      action: 'remove',
      changed: true,
      packages: [{ package_id: packageId, version: current.version }],
      message,
    };
  });
}
