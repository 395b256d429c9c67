/**
 * RFC 6962 / RFC 9162 Merkle tree hashing: leaf and node hashes, the tree head of any size (the
 * largest-power-of-two split of RFC 6962 §2.1), audit paths and consistency proofs, and their
 * verification (RFC 9162 §2.1.3.2 and §2.1.4.2). Hashes are 32-byte Buffers; hex at the edges.
 */
import { hash } from 'node:crypto';

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

/** SHA-256(0x00 || data): the hash of one leaf. */
export function leafHash(data: Uint8Array): Buffer {
  return hash('sha256', Buffer.concat([LEAF_PREFIX, data]), 'buffer');
}

/** SHA-256(0x01 || left || right): the hash of an interior node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return hash('sha256', Buffer.concat([NODE_PREFIX, left, right]), 'buffer');
}

/** The root of the empty tree: SHA-256 of the empty string. */
export const EMPTY_ROOT = hash('sha256', '', 'buffer');

/** The largest power of two strictly smaller than `n` (n >= 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * A Merkle tree over a growing list of leaf hashes. Complete, aligned subtrees (power-of-two
 * sizes) never change once full, so their hashes are memoised: after the first root, proofs for
 * many leaves of the same tree cost O(log n) hashes each instead of O(n).
 */
export interface MerkleTree {
  /** How many leaves the tree holds. */
  readonly size: number;
  append(leaf: Buffer): void;
  /** MTH of the first `size` leaves (default: all). */
  root(size?: number): Buffer;
  /** The audit path of leaf `index` in the tree of the first `size` leaves (RFC 6962 §2.1.1). */
  inclusionProof(index: number, size?: number): Buffer[];
  /** The consistency proof between the trees of the first `first` and `second` leaves (§2.1.2). */
  consistencyProof(first: number, second: number): Buffer[];
}

const MEMO_MIN = 16;

/** Creates a tree over `leaves` (copied). */
export function createMerkleTree(leaves: readonly Buffer[] = []): MerkleTree {
  const list = [...leaves];
  const memo = new Map<string, Buffer>();

  function mth(start: number, end: number): Buffer {
    const n = end - start;
    if (n === 0) return EMPTY_ROOT;
    if (n === 1) return list[start]!;
    const memoable = n >= MEMO_MIN && (n & (n - 1)) === 0 && start % n === 0;
    const key = memoable ? `${start}:${n}` : '';
    if (memoable) {
      const hit = memo.get(key);
      if (hit) return hit;
    }
    const k = splitPoint(n);
    const hash = nodeHash(mth(start, start + k), mth(start + k, end));
    if (memoable) memo.set(key, hash);
    return hash;
  }

  function path(index: number, start: number, end: number): Buffer[] {
    const n = end - start;
    if (n <= 1) return [];
    const k = splitPoint(n);
    return index < k
      ? [...path(index, start, start + k), mth(start + k, end)]
      : [...path(index - k, start + k, end), mth(start, start + k)];
  }

  function subproof(m: number, start: number, end: number, complete: boolean): Buffer[] {
    const n = end - start;
    if (m === n) return complete ? [] : [mth(start, end)];
    const k = splitPoint(n);
    return m <= k
      ? [...subproof(m, start, start + k, complete), mth(start + k, end)]
      : [...subproof(m - k, start + k, end, false), mth(start, start + k)];
  }

  const checkSize = (size: number): number => {
    if (!Number.isSafeInteger(size) || size < 0 || size > list.length)
      throw new RangeError(`tree size ${size} out of range 0..${list.length}`);
    return size;
  };

  return {
    get size() {
      return list.length;
    },
    append(leaf) {
      if (leaf.length !== 32) throw new RangeError('a leaf hash has 32 bytes');
      list.push(leaf);
    },
    root(size = list.length) {
      return mth(0, checkSize(size));
    },
    inclusionProof(index, size = list.length) {
      checkSize(size);
      if (!Number.isSafeInteger(index) || index < 0 || index >= size)
        throw new RangeError(`leaf ${index} not in a tree of size ${size}`);
      return path(index, 0, size);
    },
    consistencyProof(first, second) {
      checkSize(second);
      if (!Number.isSafeInteger(first) || first < 0 || first > second)
        throw new RangeError(`bad consistency range ${first}..${second}`);
      if (first === 0 || first === second) return [];
      return subproof(first, 0, second, true);
    },
  };
}

const lsb = (n: number): boolean => (n & 1) === 1;

/**
 * Checks an audit path (RFC 9162 §2.1.3.2): true when `leaf` at `index` of a tree of `size`
 * leaves, combined with `proof`, gives `root`. Indices are numbers (< 2^53); the bit operations
 * use division so trees beyond 2^31 leaves work too.
 */
export function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r: Uint8Array = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && Buffer.from(r).equals(Buffer.from(root));
}

/**
 * Checks a consistency proof (RFC 9162 §2.1.4.2): true when the tree of `first` leaves with root
 * `firstRoot` is a prefix of the tree of `second` leaves with root `secondRoot`.
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
  if (first === second) return proof.length === 0 && same(firstRoot, secondRoot);
  if (first === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = Number.isInteger(Math.log2(first)) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (lsb(fn)) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr: Uint8Array = path[0]!;
  let sr: Uint8Array = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && same(fr, firstRoot) && same(sr, secondRoot);
}
