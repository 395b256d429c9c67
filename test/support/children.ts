/**
 * The one place test processes start and end. `startChild` spawns a process in a process group of
 * its own (so `npx` → node, `npm start` → sh → node, Plaza and whatever it starts end together),
 * marks it with the run's and this test file's markers, and remembers it; when the file ends
 * (test/support/children-setup.ts, also after a failed or timed-out test) `stopAllChildren` kills
 * what is still running: those groups, every descendant of this worker, and every process that
 * carries this file's marker (a daemon that left its parent, e.g. PostgreSQL under pg_ctl). The
 * run's marker lets the end-of-run check (test/support/global-leftovers.ts) find whatever escaped.
 */
import {
  type ChildProcess,
  type ChildProcessWithoutNullStreams,
  spawn,
  type SpawnOptions,
  type SpawnOptionsWithoutStdio,
} from 'node:child_process';
import { once } from 'node:events';

import { descendantsOf, isRunning, killHard, listProcesses } from './processes.ts';

/** The run's marker: set by the global set-up in Vitest's process, inherited by every worker and child. */
export const RUN_ID_ENV = 'PLAZA_TEST_RUN_ID';
/** The test file's marker: the pid of the worker that runs it (children-setup.ts sets it). */
export const OWNER_ENV = 'PLAZA_TEST_OWNER';

// On globalThis: a file's modules may be loaded more than once, the worker's children are one set.
const KEY = Symbol.for('plaza.test.children');
const children: Set<ChildProcess> =
  ((globalThis as Record<symbol, unknown>)[KEY] as Set<ChildProcess> | undefined) ?? new Set();
(globalThis as Record<symbol, unknown>)[KEY] = children;

/** `env` plus the run's and this file's markers (from this process), so a child is found even with an environment of its own. */
export function withTestMarkers(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const markers: NodeJS.ProcessEnv = {};
  for (const name of [RUN_ID_ENV, OWNER_ENV]) if (process.env[name] !== undefined) markers[name] = process.env[name];
  return { ...env, ...markers };
}

/**
 * Spawns `command` as `spawn` does, but detached (a process group of its own, killed whole by
 * stopChild and at the end of the file) and marked (withTestMarkers; `options.env` defaults to
 * this process's environment). Signals sent with `child.kill` still reach the process alone.
 */
export function startChild(
  command: string,
  args: readonly string[],
  options?: SpawnOptionsWithoutStdio,
): ChildProcessWithoutNullStreams;
export function startChild(command: string, args: readonly string[], options: SpawnOptions): ChildProcess;
export function startChild(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true, env: withTestMarkers(options.env ?? process.env) });
  if (child.pid === undefined) return child; // did not start: 'error' follows, nothing to track
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/**
 * Stops a child started by startChild: SIGTERM to its group, SIGKILL to the group after `graceMs`.
 * Resolves with the exit code once it has exited.
 */
export async function stopChild(child: ChildProcess, graceMs = 3_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    child.kill('SIGTERM');
  }
  const timer = setTimeout(() => killHard(child.pid!, true), graceMs);
  const [code] = (await exited) as [number | null];
  clearTimeout(timer);
  return code;
}

/** The outcome of a finished command. */
export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` through startChild until it exits, collecting its output (its pipes get a second
 * more to close); its group is SIGKILLed after `timeoutMs`.
 */
export async function runChild(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const child = startChild(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = once(child, 'close');
  const timer = setTimeout(() => killHard(child.pid!, true), options.timeoutMs ?? 60_000);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  // The rest of its output; a background process it left holding the pipes gets a second, no more.
  await Promise.race([closed, new Promise((r) => setTimeout(r, 1_000).unref())]);
  return { code, signal, stdout, stderr };
}

/** The pids of what this file started and may still be running: tracked groups, descendants of this process, and its marked processes. */
function leftovers(): { groups: number[]; others: number[] } {
  const groups = [...children].filter((c) => c.exitCode === null && c.signalCode === null).map((c) => c.pid!);
  const all = listProcesses([OWNER_ENV]);
  const mine = new Set(
    [...descendantsOf(process.pid, all), ...all.filter((p) => p.markers[OWNER_ENV] === String(process.pid))]
      .filter((p) => p.state !== 'Z')
      .map((p) => p.pid),
  );
  return { groups, others: [...mine].filter((pid) => !groups.includes(pid)) };
}

/** SIGKILLs everything leftovers() finds, at once (the 'exit' handler's last resort: no waiting there). */
export function killAllChildrenNow(): number[] {
  const { groups, others } = leftovers();
  for (const pid of groups) killHard(pid, true);
  for (const pid of others) killHard(pid);
  return [...groups, ...others];
}

/**
 * Kills everything this file started that still runs and waits (up to `waitMs`) until it is gone.
 * Returns the pids that were still running when called.
 */
export async function stopAllChildren(waitMs = 5_000): Promise<number[]> {
  const killed = killAllChildrenNow();
  const deadline = Date.now() + waitMs;
  while (killed.some(isRunning) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return killed;
}
