/** Embedded PGlite as a {@link Database}: loaded by openDatabase only when the target is PGlite. */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { PrismaPGlite } from 'pglite-prisma-adapter';

import { acquireDataDirLock } from './data-dir-lock.ts';
import { type Database, PGLITE_DATA_FOLDER, pgliteSocketDir, SOCKET_NAME } from './database.ts';
import { PrismaClient } from './generated/client.ts';
import { pgliteSqlPool } from './internal/pglite-sql.ts';
import { pgliteTemplate, unpackTemplateInto } from './pglite-template.ts';

/**
 * PostgreSQL's start parameters for the embedded database: PGlite's own, with 32 MB of shared
 * buffers instead of PostgreSQL's 128 MB. Every buffer page PGlite touches stays resident in its
 * WebAssembly memory, which never shrinks, so a gateway writing receipts held ~100 MB more
 * (bench/README.md, "2026-11-29, evening"); pages outside the buffers are read from the data
 * folder through the operating system's file cache.
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=32MB'];

/** Opens (creating from the template when new) the embedded database in `dataDir`; see DatabaseTarget. */
export async function openPglite(dataDir: string, owner: boolean): Promise<Database> {
  const memory = dataDir.startsWith('memory://');
  let release: (() => void) | undefined;
  if (!memory) {
    mkdirSync(dataDir, { recursive: true });
    if (owner) release = acquireDataDirLock(dataDir);
  }
  const pgDir = memory ? dataDir : join(dataDir, PGLITE_DATA_FOLDER);
  try {
    let fresh = memory || !existsSync(join(pgDir, 'PG_VERSION'));
    if (fresh && !memory && (await unpackTemplateInto(pgDir))) fresh = false;
    const loadDataDir = fresh ? await pgliteTemplate() : undefined;
    const db = await PGlite.create(pgDir, { startParams: START_PARAMS, ...(loadDataDir ? { loadDataDir } : {}) });
    let socketServer: PGLiteSocketServer | undefined;
    if (owner && !memory) socketServer = await serveSocket(db, dataDir);
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) });
    const sql = pgliteSqlPool(db);
    return {
      kind: 'pglite',
      prisma,
      sql,
      description: memory ? 'pglite (in memory)' : `pglite ${pgDir}`,
      ping: async () => {
        await db.query('SELECT 1');
      },
      close: async () => {
        await socketServer?.stop().catch(() => undefined);
        await prisma.$disconnect().catch(() => undefined);
        await db.close().catch(() => undefined);
        release?.();
      },
    };
  } catch (error) {
    release?.();
    throw error;
  }
}

async function serveSocket(db: PGlite, dataDir: string): Promise<PGLiteSocketServer | undefined> {
  const dir = pgliteSocketDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, SOCKET_NAME);
  // Unix socket paths are limited to ~107 bytes; a deeper data folder just has no socket.
  if (Buffer.byteLength(path) > 100) return undefined;
  rmSync(path, { force: true });
  const server = new PGLiteSocketServer({ db, path });
  await server.start();
  return server;
}
