/**
 * Offline verification of a receipts export (what `plaza receipts verify` runs): the checkpoint
 * signature against a JWKS, every receipt's leaf hash recomputed from its fields, every inclusion
 * proof against the checkpoint root, and the chain links between receipts that are neighbours in
 * the log; given a checkpoint trusted from an earlier verification, that the export's checkpoint
 * is of a tree that extends it (RFC 6962 consistency proof). Stops at the first failure and names it.
 */
import type { JSONWebKeySet } from 'jose';

import { type Checkpoint, checkpointSignatureProblem } from './checkpoint.ts';
import { chainHash, GENESIS_HASH, receiptLeafHash } from './encoding.ts';
import { verifyConsistency, verifyInclusion } from './merkle.ts';
import { checkpointFromJson, ExportLineSchema, receiptFromJson } from './render.ts';

/** The first thing found wrong; `callId`/`seq` are absent when it is the checkpoint or the file. */
export interface VerifyFailure {
  line: number;
  callId?: string;
  seq?: number;
  problem: string;
}

/** What a verification found. */
export interface VerifyReport {
  ok: boolean;
  receipts: number;
  /** The export's checkpoint (signature checked), e.g. to trust in the next verification. */
  checkpoint: Checkpoint | undefined;
  failure: VerifyFailure | undefined;
}

/** Options of {@link verifyExport}. */
export interface VerifyOptions {
  /**
   * A checkpoint verified before (kept from an earlier export): the export's checkpoint must be of
   * a tree that extends it, or else the log was rewritten, cut back, or an old export is replayed.
   */
  trusted?: Checkpoint;
  /** The consistency proof (hex) between the trees of `first` and `second` receipts, e.g. from the server. */
  consistencyProof?: (first: number, second: number) => Promise<string[]>;
}

/** Why `checkpoint` (signature checked) does not extend the trusted one; undefined when it does. */
async function extensionProblem(
  checkpoint: Checkpoint,
  jwks: JSONWebKeySet,
  options: VerifyOptions,
): Promise<string | undefined> {
  const trusted = options.trusted;
  if (!trusted) return undefined;
  const signature = await checkpointSignatureProblem(trusted, jwks);
  if (signature) return `trusted checkpoint ${signature}`;
  const was = `the trusted checkpoint of tree size ${trusted.treeSize}`;
  if (checkpoint.treeSize < trusted.treeSize)
    return `checkpoint of tree size ${checkpoint.treeSize} is older than ${was} (the log was cut back, or an old export was served)`;
  if (checkpoint.treeSize === trusted.treeSize) {
    return checkpoint.rootHash === trusted.rootHash && checkpoint.chainHead === trusted.chainHead
      ? undefined
      : `checkpoint differs from ${was} (the log was rewritten)`;
  }
  if (trusted.treeSize === 0) return undefined;
  if (!options.consistencyProof) return `no consistency proof from ${was} to tree size ${checkpoint.treeSize}`;
  const proof = await options.consistencyProof(trusted.treeSize, checkpoint.treeSize);
  if (!Array.isArray(proof) || !proof.every((h) => typeof h === 'string' && /^[0-9a-f]{64}$/.test(h)))
    return 'the consistency proof is not a list of hashes';
  const hex = (h: string) => Buffer.from(h, 'hex');
  const consistent = verifyConsistency(
    trusted.treeSize,
    checkpoint.treeSize,
    hex(trusted.rootHash),
    hex(checkpoint.rootHash),
    proof.map(hex),
  );
  return consistent ? undefined : `checkpoint is not consistent with ${was} (the log was rewritten)`;
}

/** Verifies export lines (JSONL, checkpoint line first) against `jwks`. */
export async function verifyExport(
  lines: Iterable<string> | AsyncIterable<string>,
  jwks: JSONWebKeySet,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  let checkpoint: Checkpoint | undefined;
  let receipts = 0;
  let previous: { leafIndex: number; chain: string; callId: string } | undefined;
  let lineNo = 0;
  const fail = (failure: VerifyFailure): VerifyReport => ({ ok: false, receipts, checkpoint, failure });

  for await (const raw of lines) {
    lineNo++;
    if (raw.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return fail({ line: lineNo, problem: 'line is not JSON' });
    }
    const parsed = ExportLineSchema.safeParse(json);
    if (!parsed.success) {
      const j = json as { call_id?: unknown; seq?: unknown };
      const issue = parsed.error.issues[0];
      return fail({
        line: lineNo,
        ...(typeof j.call_id === 'string' ? { callId: j.call_id } : {}),
        ...(typeof j.seq === 'number' ? { seq: j.seq } : {}),
        problem: `malformed line: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}`,
      });
    }
    const line = parsed.data;
    if (line.type === 'checkpoint') {
      if (checkpoint) return fail({ line: lineNo, problem: 'more than one checkpoint line' });
      checkpoint = checkpointFromJson(line);
      if (new Date(checkpoint.timestamp).toISOString() !== line.timestamp)
        return fail({ line: lineNo, problem: 'checkpoint timestamp is not canonical' });
      const problem = await checkpointSignatureProblem(checkpoint, jwks);
      if (problem) return fail({ line: lineNo, problem: `checkpoint ${problem}` });
      const extension = await extensionProblem(checkpoint, jwks, options);
      if (extension) return fail({ line: lineNo, problem: extension });
      continue;
    }
    if (line.type === 'damage') {
      return fail({
        line: lineNo,
        seq: line.seq,
        problem: `the server found the log damaged at seq ${line.seq} (${line.problem}): no checkpoint covers it or any receipt after it`,
      });
    }
    const at = { line: lineNo, callId: line.call_id, seq: line.seq };
    if (!checkpoint) return fail({ ...at, problem: 'no checkpoint line before the receipts' });
    receipts++;
    const receipt = receiptFromJson(line);
    if (new Date(receipt.time).toISOString() !== line.time) return fail({ ...at, problem: 'time is not canonical' });
    if (receiptLeafHash(receipt) !== line.leaf_hash)
      return fail({ ...at, problem: 'leaf_hash does not match the receipt fields (the receipt was altered)' });
    const inclusion = line.inclusion;
    if (!inclusion) return fail({ ...at, problem: 'no inclusion proof (not covered by the checkpoint)' });
    if (inclusion.tree_size !== checkpoint.treeSize)
      return fail({
        ...at,
        problem: `inclusion proof is for tree size ${inclusion.tree_size}, the checkpoint has ${checkpoint.treeSize}`,
      });
    const proofOk = verifyInclusion(
      Buffer.from(line.leaf_hash, 'hex'),
      inclusion.leaf_index,
      inclusion.tree_size,
      inclusion.audit_path.map((h) => Buffer.from(h, 'hex')),
      Buffer.from(checkpoint.rootHash, 'hex'),
    );
    if (!proofOk) return fail({ ...at, problem: 'inclusion proof does not lead to the signed checkpoint root' });
    if (!/^[0-9a-f]{64}$/.test(line.prev_hash)) return fail({ ...at, problem: 'prev_hash is not a hash' });
    if (inclusion.leaf_index === 0 && line.prev_hash !== GENESIS_HASH)
      return fail({ ...at, problem: 'the first receipt does not start from the genesis hash' });
    if (previous && previous.leafIndex >= inclusion.leaf_index)
      return fail({ ...at, problem: 'receipts are not in log order' });
    if (previous && previous.leafIndex === inclusion.leaf_index - 1 && previous.chain !== line.prev_hash) {
      return fail({ ...at, problem: `prev_hash does not link to the previous receipt ${previous.callId}` });
    }
    const chain = chainHash(line.prev_hash, line.leaf_hash);
    if (inclusion.leaf_index === checkpoint.treeSize - 1 && chain !== checkpoint.chainHead)
      return fail({ ...at, problem: 'chain hash of the last receipt is not the checkpoint chain head' });
    previous = { leafIndex: inclusion.leaf_index, chain, callId: line.call_id };
  }
  // An empty export (an empty log) has nothing to check; receipts without a checkpoint failed above.
  if (!checkpoint && options.trusted && options.trusted.treeSize > 0) {
    return fail({
      line: lineNo,
      problem: `the export holds no checkpoint, but the trusted checkpoint has tree size ${options.trusted.treeSize}`,
    });
  }
  return { ok: true, receipts, checkpoint, failure: undefined };
}
