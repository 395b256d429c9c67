/**
 * Pins the suite's process harness (test/support/children.ts, children-setup.ts,
 * global-leftovers.ts) by running Vitest on fixture files that leave processes behind
 * (test/fixtures/leftovers): what a test starts is stopped when its file ends, also after a failed
 * and a timed-out test (a child, its grandchild, a plain spawn); a process that escaped its file
 * makes the run fail, named, and is killed.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { runChild } from '../support/children.ts';
import { isRunning } from '../support/processes.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'leftovers');

/** Runs Vitest on one fixture file; returns its exit code, its output and the pids the fixture noted. */
async function runFixture(file: string): Promise<{ code: number | null; output: string; pids: Map<string, number> }> {
  const notes = join(mkdtempSync(join(tmpdir(), 'plaza-leftovers-')), 'pids');
  writeFileSync(notes, '');
  // The inner run is a run of its own: none of this worker's Vitest variables.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^VITEST/.test(name)));
  const result = await runChild(
    process.execPath,
    [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', join(FIXTURES, 'vitest.config.ts'), file],
    {
      cwd: FIXTURES,
      env: { ...env, LEFTOVERS_PIDS: notes, NO_COLOR: '1' },
      timeoutMs: 60_000,
    },
  );
  const pids = new Map(
    readFileSync(notes, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.split(' ')[0]!, Number(line.split(' ')[1])] as const),
  );
  return { code: result.code, output: result.stdout + result.stderr, pids };
}

describe('the test harness', () => {
  it('stops every process a file started when the file ends, after a failed and a timed-out test', async () => {
    const { code, output, pids } = await runFixture('tracked.fixture.ts');
    expect([...pids.keys()].sort()).toEqual(['grandchild', 'plain', 'tracked']);
    expect(output).toMatch(/expected 'stopped' to be 'never'/);
    expect(output).toMatch(/Test timed out in 500ms/);
    expect(code).toBe(1);
    expect(output).not.toMatch(/outlived their test file/);
    for (const [label, pid] of pids) expect({ label, running: isRunning(pid) }).toEqual({ label, running: false });
  }, 60_000);

  it('fails the run when a process outlived its file, naming it, and kills it', async () => {
    const { code, output, pids } = await runFixture('escaped.fixture.ts');
    const escaped = pids.get('escaped')!;
    expect(escaped).toBeGreaterThan(0);
    expect(output).toMatch(/Tests\s+1 passed/);
    expect(output).toContain(
      `1 process(es) started by the tests outlived their test file (now killed):\n  pid ${escaped} (parent `,
    );
    expect(code).not.toBe(0);
    expect(isRunning(escaped)).toBe(false);
  }, 60_000);
});
