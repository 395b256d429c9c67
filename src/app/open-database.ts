import type { Config } from '../../config/index.ts';
import {
  type Database,
  DataDirLockedError,
  openDatabase,
  pgliteSocketExists,
  pgliteSocketUrl,
  readLockOwner,
} from '../db/index.ts';

/**
 * Opens the configured database for a role. The server owns an embedded folder (lock + local
 * socket). A command (`plaza migrate`, `plaza accounts …`) opens the folder itself only when no
 * server owns it; otherwise it talks to the running server over the socket, because two
 * processes opening one PGlite folder corrupt it.
 */
export async function openConfiguredDatabase(config: Config, role: 'server' | 'command'): Promise<Database> {
  if (config.databaseUrl) return openDatabase({ kind: 'postgres', url: config.databaseUrl });
  if (role === 'server') return openDatabase({ kind: 'pglite', dataDir: config.dataDir, owner: true });
  const owner = readLockOwner(config.dataDir);
  if (owner) {
    if (!pgliteSocketExists(config.dataDir)) throw new DataDirLockedError(config.dataDir, owner);
    return openDatabase({ kind: 'postgres', url: pgliteSocketUrl(config.dataDir), poolMax: 1 });
  }
  return openDatabase({ kind: 'pglite', dataDir: config.dataDir, owner: true });
}
