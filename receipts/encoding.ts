/**
 * What a receipt is (spec §2.6 plus latency, result digest, time and its place in the log) and its
 * canonical bytes: the leaf of the Merkle tree and the link of the hash chain are computed from
 * these bytes alone, so any verifier can recompute them from the published fields.
 */
import { hash } from 'node:crypto';

import { leafHash } from './merkle.ts';

/**
 * Receipt statuses (§2.6: "ok" in the shape; a failed call is "error"; a call Plaza refused by the
 * account's policy is "denied", one past a quota or a provider's limit "rate_limited").
 */
export const RECEIPT_STATUSES = ['ok', 'error', 'denied', 'rate_limited'] as const;

/** Receipt status (see RECEIPT_STATUSES). */
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];

/** What the gateway hands the writer for one tools/call. */
export interface ReceiptInput {
  callId: string;
  aginId: string;
  agentPrincipal: string;
  /** The account the calling agent belongs to; receipts are only shown to it. */
  accountId: string | null;
  tool: string;
  provider: string;
  status: ReceiptStatus;
  /** A short outcome text (never a credential, never the raw result). */
  outcome: string;
  latencyMs: number;
  /** sha256 hex of the result as returned to the caller. */
  resultDigest: string;
  /** When the call finished, in ms since the epoch (millisecond precision is what is stored). */
  time: number;
}

/** A committed receipt: the input plus its position in the log and its hashes. */
export interface Receipt extends ReceiptInput {
  /** Global order (database sequence; may have gaps). */
  seq: bigint;
  /** Chain hash of the previous receipt (hex); 64 zeros for the first. */
  prevHash: string;
  /** RFC 6962 leaf hash of the canonical encoding (hex). */
  leafHash: string;
}

/** prev_hash of the first receipt of the log. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * The canonical encoding: a JSON object with sorted keys, strings and integers only (which makes
 * it identical to its RFC 8785 JCS form), UTF-8. `seq` is a decimal string (it is a 64-bit
 * integer); `time` is ISO 8601 with milliseconds in UTC.
 */
export function canonicalReceipt(r: ReceiptInput & { seq: bigint }): Buffer {
  const fields = {
    account_id: r.accountId,
    agent_principal: r.agentPrincipal,
    agin_id: r.aginId,
    call_id: r.callId,
    latency_ms: r.latencyMs,
    outcome: r.outcome,
    provider: r.provider,
    result_digest: r.resultDigest,
    seq: r.seq.toString(),
    status: r.status,
    time: new Date(r.time).toISOString(),
    tool: r.tool,
  };
  return Buffer.from(JSON.stringify(fields), 'utf8');
}

/** The leaf hash (hex) of a receipt at `seq`. */
export function receiptLeafHash(r: ReceiptInput & { seq: bigint }): string {
  return leafHash(canonicalReceipt(r)).toString('hex');
}

/** The chain hash of a receipt: SHA-256(prev_hash || leaf_hash) over the raw 32-byte values. */
export function chainHash(prevHash: string, leaf: string): string {
  return hash('sha256', Buffer.concat([Buffer.from(prevHash, 'hex'), Buffer.from(leaf, 'hex')]), 'hex');
}

/** sha256 hex of a value's JSON (or of a string as is): the `resultDigest` the gateway records. */
export function digestResult(result: unknown): string {
  const text = typeof result === 'string' ? result : (JSON.stringify(result) ?? 'null');
  return hash('sha256', text, 'hex');
}
