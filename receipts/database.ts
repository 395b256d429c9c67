import type { PrismaClient, SqlPool } from '../src/db/index.ts';
import type { ReceiptStatus } from './encoding.ts';

/** The database the receipts module needs (PGlite or PostgreSQL); a `Database` fits. */
export interface ReceiptsDatabase {
  prisma: PrismaClient;
  /** Raw SQL transactions for the hot path (appending receipts). */
  sql: Pick<SqlPool, 'transaction' | 'script'>;
}

/** Filters of a receipt listing; all optional except the account. */
export interface ReceiptFilter {
  accountId: string;
  aginId?: string;
  tool?: string;
  provider?: string;
  status?: ReceiptStatus;
  since?: Date;
  until?: Date;
  /** Only receipts after this seq (cursor). */
  afterSeq?: bigint;
  /** Only receipts up to this seq (an export stops at its checkpoint's last receipt). */
  maxSeq?: bigint;
}
