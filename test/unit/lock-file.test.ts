/**
 * Lock files shared by processes (the embedded data folder's, the AGPK registry's): created
 * atomically, and a stale one broken by one process at a time, so that processes that all find the
 * lock of a dead holder never hold it together.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { breakStaleLock, createLockFile, pidLockStale } from '../../src/kernel/index.ts';
import { startChild } from '../support/children.ts';

const CONTENDERS = Number(process.env['LOCK_TEST_CONTENDERS'] ?? 5);
const ROUNDS = Number(process.env['LOCK_TEST_ROUNDS'] ?? 60);
const KERNEL = join(import.meta.dirname, '../../src/kernel/index.ts');

/**
 * A contender: takes the lock `rounds` times; inside, logs its entry and exit around a short busy
 * wait, and leaves by turning the lock into a dead process's (as a crash would), so the next
 * holder must break it. Contenders are separate processes: the race is between processes.
 */
const CONTENDER = `
import { appendFileSync, writeFileSync } from 'node:fs';
import { breakStaleLock, createLockFile, pidLockStale } from ${JSON.stringify(KERNEL)};
const [lock, log, rounds, dead] = process.argv.slice(1);
const stale = pidLockStale(10_000);
for (let i = 0; i < Number(rounds); i++) {
  while (!createLockFile(lock, String(process.pid))) breakStaleLock(lock, stale);
  appendFileSync(log, 'in ' + process.pid + '\\n');
  const until = Date.now() + 2;
  while (Date.now() < until);
  appendFileSync(log, 'out ' + process.pid + '\\n');
  writeFileSync(lock, dead);
}
`;

function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('lock files', () => {
  it('are held by one process at a time while several break the stale locks left behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plaza-lockfile-'));
    const lock = join(dir, 'the.lock');
    const log = join(dir, 'log');
    const dead = String(deadPid());
    writeFileSync(lock, dead);
    writeFileSync(log, '');
    await Promise.all(
      Array.from({ length: CONTENDERS }, () => {
        const child = startChild(
          process.execPath,
          ['--input-type=module', '-e', CONTENDER, lock, log, String(ROUNDS), dead],
          { stdio: 'inherit' },
        );
        return new Promise<void>((resolve, reject) =>
          child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`contender exited with ${code}`)))),
        );
      }),
    );
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(CONTENDERS * ROUNDS * 2);
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i]).toMatch(/^in /);
      expect(lines[i + 1]).toBe(lines[i]!.replace('in', 'out'));
    }
  });

  it('are not broken while their holder lives, nor while they name nobody and are fresh', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plaza-lockfile-'));
    const lock = join(dir, 'the.lock');
    expect(createLockFile(lock, String(process.pid))).toBe(true);
    expect(createLockFile(lock, String(process.pid))).toBe(false);
    expect(breakStaleLock(lock, pidLockStale(10_000))).toBe(false);
    writeFileSync(lock, '');
    expect(breakStaleLock(lock, pidLockStale(10_000))).toBe(false);
    // Once it is old (a crash while it was being written), it is broken.
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(breakStaleLock(lock, pidLockStale(10_000))).toBe(true);
    expect(createLockFile(lock, 'x')).toBe(true);
  });
});
