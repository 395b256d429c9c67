/**
 * Pins how Plaza configures its embedded database (src/db/pglite-database.ts): 32 MB of shared
 * buffers, on disk and in memory, so PGlite's WebAssembly memory (which never shrinks) holds no
 * more buffer pages than that (bench/README.md, "2026-11-29, evening").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { openDatabase } from '../../src/db/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'plaza-embedded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the embedded database', () => {
  it.each([
    ['in a data folder', join(dir, 'data')],
    ['in memory', 'memory://'],
  ])('runs with 32 MB of shared buffers %s', async (_where, dataDir) => {
    const db = await openDatabase({ kind: 'pglite', dataDir });
    try {
      const rows = await db.prisma.$queryRawUnsafe<Array<{ shared_buffers: string }>>('SHOW shared_buffers');
      expect(rows).toEqual([{ shared_buffers: '32MB' }]);
    } finally {
      await db.close();
    }
  });
});
