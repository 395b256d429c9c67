/**
 * The JSON forms of receipts, proofs and checkpoints: what the API returns, what an export line
 * holds, and what `plaza receipts verify` reads back (snake_case, hex hashes, ISO times).
 */
import { z } from 'zod';

import type { Checkpoint } from './checkpoint.ts';
import { type Receipt, RECEIPT_STATUSES } from './encoding.ts';

/** An inclusion proof of one receipt in the tree of a checkpoint. */
export interface InclusionProof {
  leafIndex: number;
  treeSize: number;
  /** hex hashes, leaf to root (RFC 9162 audit path). */
  auditPath: string[];
}

/** JSON of a receipt. */
export function renderReceipt(r: Receipt): Record<string, unknown> {
  return {
    seq: Number(r.seq),
    call_id: r.callId,
    agin_id: r.aginId,
    agent_principal: r.agentPrincipal,
    account_id: r.accountId,
    tool: r.tool,
    provider: r.provider,
    status: r.status,
    outcome: r.outcome,
    latency_ms: r.latencyMs,
    result_digest: r.resultDigest,
    time: new Date(r.time).toISOString(),
    prev_hash: r.prevHash,
    leaf_hash: r.leafHash,
  };
}

/** JSON of an inclusion proof. */
export function renderInclusion(p: InclusionProof): Record<string, unknown> {
  return { leaf_index: p.leafIndex, tree_size: p.treeSize, audit_path: p.auditPath };
}

/** JSON of a checkpoint. */
export function renderCheckpoint(c: Checkpoint): Record<string, unknown> {
  return {
    tree_size: c.treeSize,
    root_hash: c.rootHash,
    chain_head: c.chainHead,
    timestamp: new Date(c.timestamp).toISOString(),
    key_id: c.keyId,
    signature: c.signature,
  };
}

const hex = z.string().regex(/^[0-9a-f]{64}$/);
const iso = z.iso.datetime({ offset: true });

const ReceiptJsonSchema = z.object({
  seq: z.number().int().min(1),
  call_id: z.string(),
  agin_id: z.string(),
  agent_principal: z.string(),
  account_id: z.string().nullable(),
  tool: z.string(),
  provider: z.string(),
  status: z.enum(RECEIPT_STATUSES),
  outcome: z.string(),
  latency_ms: z.number().int(),
  result_digest: z.string(),
  time: iso,
  prev_hash: z.string(),
  leaf_hash: z.string(),
});

const InclusionJsonSchema = z.object({
  leaf_index: z.number().int().min(0),
  tree_size: z.number().int().min(1),
  audit_path: z.array(hex),
});

/** JSON of a checkpoint (what {@link renderCheckpoint} writes). */
export const CheckpointJsonSchema = z.object({
  tree_size: z.number().int().min(0),
  root_hash: hex,
  chain_head: hex,
  timestamp: iso,
  key_id: z.string(),
  signature: z.string(),
});

/**
 * One line of an export: the checkpoint first, then the receipts with their proofs; a `damage`
 * line when the server found a stored receipt that does not match its hashes (no checkpoint is
 * signed from there on, so the export would otherwise end silently at the last good one).
 */
export const ExportLineSchema = z.discriminatedUnion('type', [
  CheckpointJsonSchema.extend({ type: z.literal('checkpoint') }),
  ReceiptJsonSchema.extend({ type: z.literal('receipt'), inclusion: InclusionJsonSchema.nullable() }),
  z.object({ type: z.literal('damage'), seq: z.number().int().min(1), problem: z.string() }),
]);

/** A checkpoint back from its JSON form (the timestamp may not be canonical: compare with `renderCheckpoint`). */
export function checkpointFromJson(j: z.infer<typeof CheckpointJsonSchema>): Checkpoint {
  return {
    treeSize: j.tree_size,
    rootHash: j.root_hash,
    chainHead: j.chain_head,
    timestamp: Date.parse(j.timestamp),
    keyId: j.key_id,
    signature: j.signature,
  };
}

/** A parsed export line. */
export type ExportLine = z.infer<typeof ExportLineSchema>;

/** A receipt back from its JSON form. */
export function receiptFromJson(j: z.infer<typeof ReceiptJsonSchema>): Receipt {
  return {
    seq: BigInt(j.seq),
    callId: j.call_id,
    aginId: j.agin_id,
    agentPrincipal: j.agent_principal,
    accountId: j.account_id,
    tool: j.tool,
    provider: j.provider,
    status: j.status,
    outcome: j.outcome,
    latencyMs: j.latency_ms,
    resultDigest: j.result_digest,
    time: Date.parse(j.time),
    prevHash: j.prev_hash,
    leafHash: j.leaf_hash,
  };
}
