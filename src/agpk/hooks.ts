import { access, constants, lstat } from 'node:fs/promises';
import { join } from 'node:path';

import { AgpkError } from './errors.ts';
import { childEnv, runProcess } from './internal/run.ts';
import type { Lifecycle } from './manifest.ts';

/** Which lifecycle hook to run. */
export type HookName = 'install' | 'upgrade' | 'uninstall';

const DEFAULT_FILES: Record<HookName, string | undefined> = {
  install: 'INSTALL',
  upgrade: undefined,
  uninstall: 'UNINSTALL',
};

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** The hook file for `name`: lifecycle.<name>, else INSTALL/UNINSTALL; upgrade falls back to install. */
export async function hookFile(
  root: string,
  lifecycle: Lifecycle | undefined,
  name: HookName,
): Promise<string | undefined> {
  const declared = lifecycle?.[name] ?? DEFAULT_FILES[name];
  if (declared !== undefined && (await exists(join(root, declared)))) return declared;
  return name === 'upgrade' ? hookFile(root, lifecycle, 'install') : undefined;
}

/**
 * Runs a lifecycle hook of the package installed at `root` with AGPK_INSTALL_ROOT (and `extraEnv`).
 * Executable hooks run directly, others through /bin/sh. Throws when the hook fails or times out;
 * when `signal` aborts, the hook's process group is killed and the signal's reason is thrown.
 */
export async function runHook(
  root: string,
  packageId: string,
  version: string,
  lifecycle: Lifecycle | undefined,
  name: HookName,
  baseEnv: Record<string, string | undefined>,
  extraEnv: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<boolean> {
  const file = await hookFile(root, lifecycle, name);
  if (file === undefined) return false;
  const path = join(root, file);
  const executable = await access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
  const env = childEnv(baseEnv, {
    AGPK_INSTALL_ROOT: root,
    AGPK_PACKAGE_ID: packageId,
    AGPK_PACKAGE_VERSION: version,
    AGPK_HOOK: name,
    ...extraEnv,
  });
  const timeoutMs = (lifecycle?.hook_timeout_seconds ?? 120) * 1000;
  const run = { cwd: root, env, timeoutMs, ...(signal ? { signal } : {}) };
  const result = executable ? await runProcess(path, [], run) : await runProcess('/bin/sh', [path], run);
  signal?.throwIfAborted();
  if (result.timedOut) throw new AgpkError('bad_request', `${file} of ${packageId} timed out after ${timeoutMs} ms`);
  if (result.exitCode !== 0) {
    const tail = result.stderr.trim().split('\n').slice(-5).join('\n');
    throw new AgpkError(
      'bad_request',
      `${file} of ${packageId} failed (exit ${result.exitCode ?? result.signal ?? 'unknown'})${tail ? `: ${tail}` : ''}`,
    );
  }
  return true;
}
