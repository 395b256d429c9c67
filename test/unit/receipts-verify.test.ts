/**
 * Pins the offline verifier on exports built in memory: an intact export passes, and each kind of
 * tampering (a field, a recomputed leaf, a broken chain link, a dropped proof step, a forged or
 * foreign checkpoint signature, a checkpoint signed by a key of another purpose) fails naming the
 * first bad receipt and what failed.
 */
import { exportJWK, generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';

import {
  chainHash,
  type Checkpoint,
  checkpointText,
  createJwsCheckpointSigner,
  createMerkleTree,
  GENESIS_HASH,
  type MerkleTree,
  type Receipt,
  receiptLeafHash,
  renderCheckpoint,
  renderInclusion,
  renderReceipt,
  type TreeHead,
  verifyExport,
} from '../../receipts/index.ts';

type Line = Record<string, unknown>;

let jwks: { keys: never[] };
let lines: Line[];
let otherJwks: { keys: never[] };
let tree: MerkleTree;
/** Signed checkpoints of the first 5 receipts, honest and of a rewritten log. */
let five: Checkpoint;
let rewrittenFive: Checkpoint;
let signHead: (head: TreeHead) => Promise<Checkpoint>;

/** A key pair and its JWKS as Plaza publishes it (`purpose` member; none when `purpose` is null, as before it had one). */
async function keyPair(kid: string, purpose: string | null = 'receipts') {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const jwk = {
    ...(await exportJWK(publicKey)),
    kid,
    alg: 'EdDSA',
    use: 'sig',
    ...(purpose === null ? {} : { purpose }),
  };
  return { signer: createJwsCheckpointSigner(async () => ({ kid, privateKey })), jwks: { keys: [jwk] as never[] } };
}

/** The export's checkpoint line signed again by `signer`. */
async function resigned(signer: Awaited<ReturnType<typeof keyPair>>['signer']): Promise<Line[]> {
  const cp = lines[0] as { tree_size: number; root_hash: string; chain_head: string; timestamp: string };
  const head = {
    treeSize: cp.tree_size,
    rootHash: cp.root_hash,
    chainHead: cp.chain_head,
    timestamp: Date.parse(cp.timestamp),
  };
  const { keyId, signature } = await signer.sign(checkpointText(head));
  return [{ ...lines[0], key_id: keyId, signature }, ...lines.slice(1)];
}

beforeAll(async () => {
  const mine = await keyPair('receipts_1');
  jwks = mine.jwks;
  otherJwks = (await keyPair('receipts_1')).jwks;
  const receipts: Receipt[] = [];
  let prev = GENESIS_HASH;
  for (let i = 0; i < 9; i++) {
    const base = {
      seq: BigInt(i * 2 + 1),
      callId: `call_${i}`,
      aginId: 'agin_1',
      agentPrincipal: 'agent:1',
      accountId: 'acc_1',
      tool: 'echo',
      provider: 'p',
      status: 'ok' as const,
      outcome: `result ${i}`,
      latencyMs: i,
      resultDigest: 'c'.repeat(64),
      time: Date.parse('2026-11-21T12:00:00.000Z') + i,
    };
    const leafHash = receiptLeafHash(base);
    receipts.push({ ...base, prevHash: prev, leafHash });
    prev = chainHash(prev, leafHash);
  }
  tree = createMerkleTree(receipts.map((r) => Buffer.from(r.leafHash, 'hex')));
  const head = {
    treeSize: 9,
    rootHash: tree.root().toString('hex'),
    chainHead: prev,
    timestamp: Date.parse('2026-11-21T12:01:00.000Z'),
  };
  signHead = async (h) => ({
    treeSize: h.treeSize,
    rootHash: h.rootHash,
    chainHead: h.chainHead,
    timestamp: h.timestamp,
    ...(await mine.signer.sign(checkpointText(h))),
  });
  const checkpoint = await signHead(head);
  const fiveOf = (t: MerkleTree) =>
    signHead({
      treeSize: 5,
      rootHash: t.root(5).toString('hex'),
      chainHead: 'a'.repeat(64),
      timestamp: Date.parse('2026-11-21T12:00:30.000Z'),
    });
  five = await fiveOf(tree);
  rewrittenFive = await fiveOf(
    createMerkleTree([...receipts.slice(0, 4).map((r) => Buffer.from(r.leafHash, 'hex')), Buffer.alloc(32, 7)]),
  );
  lines = [
    { type: 'checkpoint', ...renderCheckpoint(checkpoint) },
    ...receipts.map((r, i) => ({
      type: 'receipt',
      ...renderReceipt(r),
      inclusion: renderInclusion({
        leafIndex: i,
        treeSize: 9,
        auditPath: tree.inclusionProof(i).map((h) => h.toString('hex')),
      }),
    })),
  ];
});

const verify = (ls: Line[], keys = jwks) =>
  verifyExport(
    ls.map((l) => JSON.stringify(l)),
    keys,
  );
const alter = (index: number, change: (line: Line) => Line): Line[] =>
  lines.map((l, i) => (i === index ? change(structuredClone(l)) : l));

describe('verifyExport', () => {
  it('accepts an intact export', async () => {
    expect(await verify(lines)).toMatchObject({ ok: true, receipts: 9, checkpoint: { treeSize: 9 } });
  });

  it('names a receipt whose field was changed', async () => {
    const report = await verify(alter(4, (l) => ({ ...l, outcome: 'forged' })));
    expect(report).toMatchObject({ ok: false, failure: { callId: 'call_3', seq: 7, line: 5 } });
    expect(report.failure?.problem).toMatch(/leaf_hash does not match/);
  });

  it('catches a changed receipt whose leaf hash was recomputed to match', async () => {
    const report = await verify(
      alter(3, (l) => {
        const r = { ...l, outcome: 'forged' } as Line;
        const leaf = receiptLeafHash({
          seq: BigInt(r['seq'] as number),
          callId: r['call_id'] as string,
          aginId: r['agin_id'] as string,
          agentPrincipal: r['agent_principal'] as string,
          accountId: r['account_id'] as string,
          tool: r['tool'] as string,
          provider: r['provider'] as string,
          status: 'ok',
          outcome: 'forged',
          latencyMs: r['latency_ms'] as number,
          resultDigest: r['result_digest'] as string,
          time: Date.parse(r['time'] as string),
        });
        return { ...r, leaf_hash: leaf };
      }),
    );
    expect(report.failure).toMatchObject({ callId: 'call_2' });
    expect(report.failure?.problem).toMatch(/inclusion proof/);
  });

  it('names a broken chain link', async () => {
    const report = await verify(alter(6, (l) => ({ ...l, prev_hash: 'd'.repeat(64) })));
    expect(report.failure).toMatchObject({
      callId: 'call_5',
      problem: expect.stringMatching(/prev_hash does not link to the previous receipt call_4/),
    });
  });

  it('rejects a shortened audit path', async () => {
    const report = await verify(
      alter(2, (l) => ({
        ...l,
        inclusion: {
          ...(l['inclusion'] as Line),
          audit_path: (l['inclusion'] as { audit_path: string[] }).audit_path.slice(1),
        },
      })),
    );
    expect(report.failure).toMatchObject({ callId: 'call_1' });
  });

  it('rejects a checkpoint with an altered root or signed by another key', async () => {
    const root = await verify(alter(0, (l) => ({ ...l, root_hash: 'e'.repeat(64) })));
    expect(root.failure).toMatchObject({
      line: 1,
      problem: expect.stringMatching(/checkpoint signature does not verify/),
    });
    const foreign = await verify(lines, otherJwks);
    expect(foreign.failure?.problem).toMatch(/checkpoint signature does not verify/);
    expect(foreign.failure?.callId).toBeUndefined();
  });

  it('accepts only a receipts key for the checkpoint, by its purpose or, in a JWKS without purposes, by its kid', async () => {
    // A JWKS saved before keys carried a purpose still verifies.
    expect(
      await verify(lines, { keys: jwks.keys.map(({ purpose: _, ...jwk }: Line) => jwk) as never[] }),
    ).toMatchObject({ ok: true, receipts: 9 });
    // Another purpose's key (guest tokens, call assertions), however the signature looks, is not one.
    for (const [kid, purpose] of [
      ['token_1', 'token'],
      ['receipts_2', 'assertion'],
      ['token_1', null],
    ] as const) {
      const other = await keyPair(kid, purpose);
      const report = await verify(await resigned(other.signer), { keys: [...jwks.keys, ...other.jwks.keys] });
      expect(report.failure, `${kid} ${purpose}`).toMatchObject({
        line: 1,
        problem: `checkpoint key ${kid} is not a receipts key (it has another purpose)`,
      });
    }
    // The signature is checked against receipts keys only, whatever key_id the line names.
    const token = await keyPair('token_1', 'token');
    const named = (await resigned(token.signer)).map((l, i) => (i === 0 ? { ...l, key_id: 'receipts_1' } : l));
    expect((await verify(named, { keys: [...jwks.keys, ...token.jwks.keys] })).failure?.problem).toMatch(
      /checkpoint signature does not verify/,
    );
  });

  it('given a trusted earlier checkpoint, passes only a log that extends it', async () => {
    const proof = async (first: number, second: number) =>
      tree.consistencyProof(first, second).map((h) => h.toString('hex'));
    const checked = (trusted: Checkpoint, ls: Line[] = lines, consistencyProof: typeof proof | null = proof) =>
      verifyExport(
        ls.map((l) => JSON.stringify(l)),
        jwks,
        { trusted, ...(consistencyProof ? { consistencyProof } : {}) },
      );
    expect(await checked(five)).toMatchObject({ ok: true, receipts: 9 });
    const nine = (await verify(lines)).checkpoint!;
    expect(await checked(nine, lines, null)).toMatchObject({ ok: true });
    // The log was rewritten, then signed again: no proof joins the trusted root to the new one.
    expect((await checked(rewrittenFive)).failure).toEqual({
      line: 1,
      problem: 'checkpoint is not consistent with the trusted checkpoint of tree size 5 (the log was rewritten)',
    });
    // Of the trusted size but another tree; older than the trusted one; none at all.
    const rewrittenNine = await signHead({ ...nine, rootHash: five.rootHash });
    expect((await checked(rewrittenNine)).failure).toEqual({
      line: 1,
      problem: 'checkpoint differs from the trusted checkpoint of tree size 9 (the log was rewritten)',
    });
    expect((await checked(nine, [{ type: 'checkpoint', ...renderCheckpoint(five) }])).failure).toEqual({
      line: 1,
      problem:
        'checkpoint of tree size 5 is older than the trusted checkpoint of tree size 9 (the log was cut back, or an old export was served)',
    });
    expect((await checked(nine, [])).failure?.problem).toBe(
      'the export holds no checkpoint, but the trusted checkpoint has tree size 9',
    );
    // A trusted checkpoint must carry a good signature; a proof must be there and be hashes.
    expect((await checked({ ...five, rootHash: nine.rootHash })).failure?.problem).toMatch(
      /^trusted checkpoint signature does not verify/,
    );
    expect((await checked(five, lines, null)).failure?.problem).toBe(
      'no consistency proof from the trusted checkpoint of tree size 5 to tree size 9',
    );
    expect((await checked(five, lines, async () => ['zz'])).failure?.problem).toBe(
      'the consistency proof is not a list of hashes',
    );
  });

  it('rejects receipts without a checkpoint and lines that are not JSON', async () => {
    expect((await verify(lines.slice(1))).failure).toMatchObject({
      callId: 'call_0',
      problem: expect.stringMatching(/no checkpoint/),
    });
    expect((await verifyExport([JSON.stringify(lines[0]), '{not json'], jwks)).failure).toMatchObject({
      line: 2,
      problem: 'line is not JSON',
    });
  });
});
