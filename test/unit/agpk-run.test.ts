/**
 * Pins how package hooks and commands are run (src/agpk/internal/run.ts): the timeout kills the
 * program's whole process group, and a background child holding the output does not hold the run.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

import { describe, expect, it } from 'vitest';

import { runProcess } from '../../src/agpk/internal/run.ts';

const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
/** Running (a killed process nobody has reaped yet is a zombie, state Z: not running). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('runProcess', () => {
  it('kills what the program started when its time is up, not only the program', async () => {
    const result = await runProcess('/bin/sh', ['-c', 'sleep 30 & echo $!; wait'], {
      cwd: tmpdir(),
      env,
      timeoutMs: 500,
    });
    expect(result.timedOut).toBe(true);
    const sleeper = Number(result.stdout.trim());
    expect(sleeper).toBeGreaterThan(0);
    await expect.poll(() => alive(sleeper)).toBe(false);
  });

  it('ends when the program exits, though a background child still holds its output', async () => {
    // The run used to wait for the pipes to close: here, for 30 s past the hook's own end.
    const result = await runProcess('/bin/sh', ['-c', 'sleep 30 & echo $!'], { cwd: tmpdir(), env, timeoutMs: 20_000 });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    process.kill(Number(result.stdout.trim()), 'SIGKILL');
  });
});
