/**
 * Checking a receipt as `GET /api/receipts/<call_id>` answers it: the receipt's leaf, its inclusion
 * proof and the checkpoint the proof is against, in the API's hex encoding.
 */
import { verifyInclusion } from '../../receipts/index.ts';

/** The `data` of `GET /api/receipts/<call_id>`, as far as the inclusion proof needs it. */
export interface ReceiptProof {
  receipt: { leaf_hash: string };
  inclusion: { leaf_index: number; tree_size: number; audit_path: string[] };
  checkpoint: { root_hash: string };
}

/** Whether the receipt's leaf is in the checkpoint's tree by its inclusion proof. */
export function inclusionVerifies({ receipt, inclusion, checkpoint }: ReceiptProof): boolean {
  const hex = (h: string) => Buffer.from(h, 'hex');
  return verifyInclusion(
    hex(receipt.leaf_hash),
    inclusion.leaf_index,
    inclusion.tree_size,
    inclusion.audit_path.map(hex),
    hex(checkpoint.root_hash),
  );
}
