/**
 * Vitest global set-up: every temporary file and folder of the run (tests, `plaza` children,
 * Chromium) goes under one folder of its own, removed when the run ends, so repeated runs leave
 * nothing behind in the system's temporary folder. Workers and their children inherit TMPDIR.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const previous = process.env['TMPDIR'];
  const dir = mkdtempSync(join(tmpdir(), 'plaza-vitest-'));
  // Traversable by other users (not listable): the private PostgreSQL cluster of the restart
  // tests runs as the postgres user inside a folder of its own here.
  chmodSync(dir, 0o711);
  process.env['TMPDIR'] = dir;
  return () => {
    if (previous === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = previous;
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
