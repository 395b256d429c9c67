/** Data access: opening PGlite or PostgreSQL, migrations, the embedded folder's lock. */
export type { LockOwner } from './data-dir-lock.ts';
export { acquireDataDirLock, acquireFolderLock, DataDirLockedError, readLockOwner } from './data-dir-lock.ts';
export type { Database, DatabaseTarget } from './database.ts';
export { openDatabase, pgliteDataExists, pgliteSocketExists, pgliteSocketUrl } from './database.ts';
export type { Prisma, PrismaClient } from './generated/client.ts';
export type { Migration, MigrationReport } from './migrate.ts';
export { migrate, MigrationError, MIGRATIONS_DIR, readMigrations } from './migrate.ts';
export { pgliteTemplate } from './pglite-template.ts';
export type { LeasedTable } from './row-leases.ts';
export { claimDueRows, claimRow } from './row-leases.ts';
export type { SqlClient, SqlPool, SqlSession, SqlTransaction } from './sql-client.ts';
