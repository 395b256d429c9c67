/**
 * Pins the RFC 6962 Merkle tree of receipts: the known test vectors of the Certificate
 * Transparency reference implementation, a naive reference for sizes 1..64, and that every
 * inclusion and consistency proof verifies while altered ones do not.
 */
import { createHash } from 'node:crypto';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  createMerkleTree,
  EMPTY_ROOT,
  leafHash,
  nodeHash,
  verifyConsistency,
  verifyInclusion,
} from '../../receipts/index.ts';

/** The leaves of the CT reference tests (merkle_tree_test.cc). */
const CT_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'];
const CT_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

/** MTH straight from RFC 6962 §2.1, no memo, no tricks. */
function naiveRoot(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(naiveRoot(leaves.slice(0, k)), naiveRoot(leaves.slice(k)));
}

const leavesOf = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`receipt ${i}`)));

describe('Merkle tree hash', () => {
  it('matches the Certificate Transparency test vectors', () => {
    const tree = createMerkleTree();
    expect(tree.root().toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(EMPTY_ROOT.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    CT_LEAVES.forEach((hex, i) => {
      tree.append(leafHash(Buffer.from(hex, 'hex')));
      expect(tree.root().toString('hex'), `size ${i + 1}`).toBe(CT_ROOTS[i]);
    });
  });

  it('equals the naive RFC 6962 definition for every size up to 70', () => {
    const leaves = leavesOf(70);
    const tree = createMerkleTree(leaves);
    for (let n = 0; n <= 70; n++) expect(tree.root(n).equals(naiveRoot(leaves.slice(0, n))), `size ${n}`).toBe(true);
  });
});

describe('inclusion proofs', () => {
  const leaves = leavesOf(64);
  const tree = createMerkleTree(leaves);

  it('verify for every leaf of every tree size 1..64', () => {
    for (let n = 1; n <= 64; n++) {
      const root = tree.root(n);
      for (let i = 0; i < n; i++)
        expect(verifyInclusion(leaves[i]!, i, n, tree.inclusionProof(i, n), root), `leaf ${i} of ${n}`).toBe(true);
    }
  });

  it('fail for a wrong leaf, index, size, root or a flipped path bit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 64 }), fc.nat(), fc.nat(), (n, a, b) => {
        const i = a % n;
        const proof = tree.inclusionProof(i, n);
        const root = tree.root(n);
        expect(verifyInclusion(leaves[(i + 1) % n]!, i, n, proof, root)).toBe(false);
        expect(verifyInclusion(leaves[i]!, (i + 1) % n, n, proof, root)).toBe(false);
        expect(verifyInclusion(leaves[i]!, i, n, proof, tree.root(n - 1))).toBe(false);
        expect(verifyInclusion(leaves[i]!, i, n + 64, proof, root)).toBe(false);
        if (proof.length > 0) {
          const bent = proof.map((p) => Buffer.from(p));
          const j = b % bent.length;
          bent[j]![b % 32]! ^= 1;
          expect(verifyInclusion(leaves[i]!, i, n, bent, root)).toBe(false);
          expect(verifyInclusion(leaves[i]!, i, n, proof.slice(1), root)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('consistency proofs', () => {
  const leaves = leavesOf(64);
  const tree = createMerkleTree(leaves);

  it('verify between every pair of sizes 1..64', () => {
    for (let m = 1; m <= 64; m++) {
      for (let n = m; n <= 64; n++) {
        expect(verifyConsistency(m, n, tree.root(m), tree.root(n), tree.consistencyProof(m, n)), `${m} -> ${n}`).toBe(
          true,
        );
      }
    }
  });

  it('fail when the old tree is not a prefix of the new one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 63 }), fc.integer({ min: 1, max: 64 }), (m, extra) => {
        const n = Math.min(64, m + extra);
        const proof = tree.consistencyProof(m, n);
        const forged = createMerkleTree([
          ...leaves.slice(0, m - 1),
          leafHash(Buffer.from('forged')),
          ...leaves.slice(m, n),
        ]);
        if (m < n) {
          expect(verifyConsistency(m, n, forged.root(m), tree.root(n), proof)).toBe(false);
          expect(verifyConsistency(m, n, tree.root(m), forged.root(n), proof)).toBe(false);
          expect(verifyConsistency(m, n, tree.root(m), tree.root(n), proof.slice(0, -1))).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});
