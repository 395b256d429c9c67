/**
 * Receipts (spec §1.4, §2.6): the batched, durable receipt writer and the tamper-evident log
 * (global order, hash chain, RFC 6962 Merkle tree, signed checkpoints), its queries and the
 * offline verifier. No HTTP here: `src/routes/receipts.ts` and `src/cli/receipts.ts` mount it.
 */
export type { Checkpoint, CheckpointSigner, TreeHead } from './checkpoint.ts';
export {
  CHECKPOINT_KEY_PURPOSE,
  CHECKPOINT_TYP,
  checkpointSignatureProblem,
  checkpointText,
  createJwsCheckpointSigner,
  isCheckpointKey,
} from './checkpoint.ts';
export type { ReceiptFilter, ReceiptsDatabase } from './database.ts';
export type { Receipt, ReceiptInput, ReceiptStatus } from './encoding.ts';
export {
  canonicalReceipt,
  chainHash,
  digestResult,
  GENESIS_HASH,
  RECEIPT_STATUSES,
  receiptLeafHash,
} from './encoding.ts';
export { parseReceiptInput, ReceiptInputSchema } from './input.ts';
export type { ReceiptsLog } from './log-sink.ts';
export type { MerkleTree } from './merkle.ts';
export { createMerkleTree, EMPTY_ROOT, leafHash, nodeHash, verifyConsistency, verifyInclusion } from './merkle.ts';
export type { LogDamage, ProvenReceipt, ReceiptLog, ReceiptLogOptions } from './receipt-log.ts';
export { createReceiptLog } from './receipt-log.ts';
export type { ExportLine, InclusionProof } from './render.ts';
export {
  checkpointFromJson,
  CheckpointJsonSchema,
  ExportLineSchema,
  renderCheckpoint,
  renderInclusion,
  renderReceipt,
} from './render.ts';
export type { ReceiptSpool } from './spool.ts';
export { adoptSpoolFiles, createReceiptSpool } from './spool.ts';
export type { VerifyFailure, VerifyOptions, VerifyReport } from './verify.ts';
export { verifyExport } from './verify.ts';
export type { ReceiptDurability, ReceiptWriter, ReceiptWriterOptions, ReceiptWriterStats } from './writer.ts';
export { createReceiptWriter } from './writer.ts';
