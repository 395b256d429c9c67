/**
 * Vitest global set-up: marks the run (RUN_ID_ENV, inherited by every worker and child) and, when
 * the run ends, fails it when a process the run started is still alive — one that carries the
 * run's marker or descends from Vitest's process (other than Vitest's own workers). Each test file
 * ends its processes (test/support/children-setup.ts); this is the check that nothing escaped.
 * The survivors are named, then killed, so a failed run still leaves the machine clean.
 */
import { randomUUID } from 'node:crypto';

import { RUN_ID_ENV } from './children.ts';
import { descendantsOf, describeProcess, isRunning, killHard, listProcesses, type ProcessInfo } from './processes.ts';

/** How long processes killed at the end of their file get to disappear before they count as left behind. */
const SETTLE_MS = 1_000;

function survivors(runId: string): ProcessInfo[] {
  const all = listProcesses([RUN_ID_ENV]);
  const ours = new Set([...all.filter((p) => p.markers[RUN_ID_ENV] === runId), ...descendantsOf(process.pid, all)]);
  // Vitest's own children (its fork workers as they exit, its watchdog) are not the tests'.
  return [...ours].filter((p) => p.state !== 'Z' && !(p.ppid === process.pid && /vitest/.test(p.command)));
}

export default function setup(): () => Promise<void> {
  const runId = randomUUID();
  process.env[RUN_ID_ENV] = runId;
  return async () => {
    const deadline = Date.now() + SETTLE_MS;
    let left = survivors(runId);
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      left = left.filter((p) => isRunning(p.pid));
    }
    if (left.length === 0) return;
    for (const p of left) killHard(p.pid);
    throw new Error(
      `${left.length} process(es) started by the tests outlived their test file (now killed):\n${left.map((p) => `  ${describeProcess(p)}`).join('\n')}`,
    );
  };
}
