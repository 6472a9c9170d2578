import { createHash, hash } from 'node:crypto';

/**
 * The Merkle tree of RFC 6962 section 2.1 (the same in RFC 9162 section 2.1), over leaf records.
 * Pure: storage is reached only through the `perfect` callback the caller supplies. Tree sizes and
 * indexes are plain numbers, exact up to 2^53, so arithmetic here avoids 32-bit bitwise operators.
 */

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

/** SHA-256(0x00 || record). */
export function leafHash(leafRecord: Buffer): Buffer {
  return createHash('sha256').update(LEAF_PREFIX).update(leafRecord).digest();
}

/**
 * One node's input, reused: 0x01 and two 32-byte hashes. Safe to share because hash() reads it
 * synchronously and nothing else writes it between the copy and the hash.
 */
const NODE_INPUT = Buffer.alloc(65);
NODE_INPUT[0] = 0x01;

/**
 * SHA-256(0x01 || left || right). One-shot crypto.hash over one reused buffer rather than a Hash
 * object with three updates: the sealer computes about one node per leaf, and the object's setup was
 * most of each (bench/RESULTS.md, issue 29). Any other length than 32 bytes takes the general path.
 */
export function nodeHash(left: Buffer, right: Buffer): Buffer {
  if (left.length !== 32 || right.length !== 32) return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
  left.copy(NODE_INPUT, 1);
  right.copy(NODE_INPUT, 33);
  return hash('sha256', NODE_INPUT, 'buffer');
}

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

function checkSize(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number from 0 to 2^53, got ${value}`);
}

/** The largest power of two strictly smaller than n (n ≥ 2): where RFC 6962 splits a tree of n leaves. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && 2 ** Math.round(Math.log2(n)) === n;
}

/** MTH over the list (small lists: tests, the verifier's checks of a page). */
export function rootOf(leafHashes: readonly Buffer[]): Buffer {
  if (leafHashes.length === 0) return EMPTY_ROOT;
  const range = new CompactRange(0, []);
  for (const h of leafHashes) range.append(h);
  return range.root();
}

/**
 * MTH(D[start:end]) for any range; `perfect(level, index)` returns the stored hash of the perfect
 * subtree covering leaves [index*2^level, (index+1)*2^level) — the caller's storage answers it.
 */
export type PerfectSubtree = (level: number, index: number) => Promise<Buffer>;

/**
 * MTH(D[start:end]): RFC 6962's recursion applied to the sub-list, reaching storage only for aligned
 * perfect subtrees, so a range costs O(log n) reads whatever its size.
 */
export async function subtreeHash(start: number, end: number, perfect: PerfectSubtree): Promise<Buffer> {
  checkSize('start', start);
  checkSize('end', end);
  if (end < start) throw new RangeError(`subtree range [${start}, ${end}) is reversed`);
  const n = end - start;
  if (n === 0) return EMPTY_ROOT;
  if (isPowerOfTwo(n) && start % n === 0) return perfect(Math.round(Math.log2(n)), start / n);
  const k = splitPoint(n);
  const [left, right] = await Promise.all([subtreeHash(start, start + k, perfect), subtreeHash(start + k, end, perfect)]);
  return nodeHash(left, right);
}

/** RFC 6962 PATH(index, D[0:treeSize]): the audit path, from the leaf's sibling up to the root's child. */
export async function inclusionProof(index: number, treeSize: number, perfect: PerfectSubtree): Promise<Buffer[]> {
  checkSize('index', index);
  checkSize('treeSize', treeSize);
  if (index >= treeSize) throw new RangeError(`leaf ${index} is not in a tree of ${treeSize} leaves`);
  // Walk down from the root, collecting siblings top-down; the proof lists them bottom-up.
  const topDown: Array<Promise<Buffer>> = [];
  let start = 0;
  let end = treeSize;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index < start + k) {
      topDown.push(subtreeHash(start + k, end, perfect));
      end = start + k;
    } else {
      topDown.push(subtreeHash(start, start + k, perfect));
      start += k;
    }
  }
  return (await Promise.all(topDown)).reverse();
}

/** RFC 6962 PROOF(first, D[0:second]) (section 2.1.2). Empty when first is 0 or equals second. */
export async function consistencyProof(first: number, second: number, perfect: PerfectSubtree): Promise<Buffer[]> {
  checkSize('first', first);
  checkSize('second', second);
  if (first > second) throw new RangeError(`a consistency proof needs first ≤ second, got ${first} > ${second}`);
  if (first === 0 || first === second) return [];
  // SUBPROOF(m, D[start:end], b), unrolled; nodes collected top-down, returned bottom-up.
  const topDown: Array<Promise<Buffer>> = [];
  let start = 0;
  let end = second;
  let m = first;
  let whole = true;
  for (;;) {
    const n = end - start;
    if (m === n) {
      if (!whole) topDown.push(subtreeHash(start, end, perfect));
      break;
    }
    const k = splitPoint(n);
    if (m <= k) {
      topDown.push(subtreeHash(start + k, end, perfect));
      end = start + k;
    } else {
      topDown.push(subtreeHash(start, start + k, perfect));
      start += k;
      m -= k;
      whole = false;
    }
  }
  return (await Promise.all(topDown)).reverse();
}

function equal(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && a.equals(b);
}

/** RFC 9162 section 2.1.3.2: does `proof` place `leafHash` at `index` of the tree whose root is `root`? */
export function verifyInclusion(index: number, treeSize: number, leafHash: Buffer, proof: readonly Buffer[], root: Buffer): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
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
  return sn === 0 && equal(r, root);
}

/**
 * RFC 9162 section 2.1.4.2: is the tree of `second` leaves with root `secondRoot` an extension of the
 * tree of `first` leaves with root `firstRoot`? Size 0 is a prefix of every tree (its root must be
 * EMPTY_ROOT, the proof empty); equal sizes need equal roots and an empty proof.
 */
export function verifyConsistency(first: number, second: number, firstRoot: Buffer, secondRoot: Buffer, proof: readonly Buffer[]): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (first === 0) return proof.length === 0 && equal(firstRoot, EMPTY_ROOT);
  if (first === second) return proof.length === 0 && equal(firstRoot, secondRoot);
  if (proof.length === 0) return false;
  // When first is a power of two, the first tree is a node of the second and the proof omits it.
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
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
  return sn === 0 && equal(fr, firstRoot) && equal(sr, secondRoot);
}

/**
 * Copies 32 bytes. Buffer.copy crosses into C++ on each call, and appendAll copies three hashes a leaf:
 * with a loop the JIT compiles, appendAll costs 8-32 % less a leaf (`node bench/merkle-append.js`,
 * bench/RESULTS.md).
 */
function copy32(from: Uint8Array, fromAt: number, to: Uint8Array, toAt: number): void {
  for (let i = 0; i < 32; i++) to[toAt + i] = from[fromAt + i];
}

/**
 * Incremental builder: the right edge of the tree ("compact range"), to append leaves and get the root
 * without re-reading old leaves; also yields every perfect subtree completed by an append.
 *
 * The edge is one flat buffer of 32-byte hashes, and appendAll hashes each interior node into
 * one reused input as a 'binary' (latin1) string (crypto.hash's 'buffer' output allocates a fresh ArrayBuffer per
 * call, ~0.9-1.5 µs with the garbage collection it causes; a 32-character string ~0.4 µs): the sealer
 * computes about one node per leaf, 100,000 a backlog (bench/RESULTS.md, issue 29). Only the nodes
 * asked for become Buffers.
 */
export class CompactRange {
  private _size: number;
  /** The edge hashes, largest subtree first, 32 bytes each; at most 53 (sizes stay below 2^53). */
  private readonly _edge = Buffer.alloc(64 * 32);
  private _edgeLength = 0;
  /** appendAll's node input (0x01, left, right), its own so that no nodeHash in a callback overwrites it. */
  private readonly _node = Buffer.alloc(65, 0x01);

  /** edge: the perfect-subtree roots along the right edge, largest first (one per 1-bit of size). */
  constructor(size: number, edge: Buffer[]) {
    checkSize('size', size);
    let bits = 0;
    for (let s = size; s > 0; s = Math.floor(s / 2)) bits += s % 2;
    if (edge.length !== bits) throw new RangeError(`a compact range of ${size} leaves has ${bits} edge hashes, got ${edge.length}`);
    for (const h of edge) if (h.length !== 32) throw new RangeError('every edge hash has 32 bytes');
    this._size = size;
    for (const h of edge) h.copy(this._edge, 32 * this._edgeLength++);
  }

  get size(): number {
    return this._size;
  }

  get edge(): readonly Buffer[] {
    return Array.from({ length: this._edgeLength }, (_, i) => Buffer.from(this._edge.subarray(32 * i, 32 * i + 32)));
  }

  /**
   * Appends one leaf. `onPerfect(level, index, hash)` is called for every perfect subtree the append
   * completes, bottom-up, starting with the leaf itself at level 0 (index = its leaf index): exactly
   * the values a PerfectSubtree callback must later answer.
   */
  append(leafHash: Buffer, onPerfect?: (level: number, index: number, hash: Buffer) => void): void {
    if (leafHash.length !== 32) throw new RangeError('a leaf hash has 32 bytes');
    this.appendAll(leafHash, onPerfect);
  }

  /**
   * Appends the leaves whose hashes `leafHashes` holds one after the other (32 bytes each), as many
   * append calls would. `onPerfect` is called only for the levels `wanted` accepts (every level when
   * it is not given), with a hash of its own.
   */
  appendAll(leafHashes: Buffer, onPerfect?: (level: number, index: number, hash: Buffer) => void, wanted?: (level: number) => boolean): void {
    if (leafHashes.length % 32 !== 0) throw new RangeError('leaf hashes come 32 bytes each');
    const node = this._node;
    const edge = this._edge;
    for (let at = 0; at < leafHashes.length; at += 32) {
      // The node being completed sits in node[33, 65): the right child of the next hash up.
      copy32(leafHashes, at, node, 33);
      let level = 0;
      let index = this._size;
      if (onPerfect && (!wanted || wanted(0))) onPerfect(0, index, Buffer.from(node.subarray(33, 65)));
      // Each trailing 1-bit of the old size is a left sibling on the edge that the new node completes.
      for (let s = this._size; s % 2 === 1; s = Math.floor(s / 2)) {
        this._edgeLength -= 1;
        copy32(edge, 32 * this._edgeLength, node, 1);
        node.write(hash('sha256', node, 'binary'), 33, 'binary');
        level += 1;
        index = Math.floor(index / 2);
        if (onPerfect && (!wanted || wanted(level))) onPerfect(level, index, Buffer.from(node.subarray(33, 65)));
      }
      copy32(node, 33, edge, 32 * this._edgeLength++);
      this._size += 1;
    }
  }

  /** MTH of the leaves so far: the edge folded right to left. */
  root(): Buffer {
    if (this._edgeLength === 0) return EMPTY_ROOT;
    const hashAt = (i: number) => this._edge.subarray(32 * i, 32 * i + 32);
    let root: Buffer = Buffer.from(hashAt(this._edgeLength - 1));
    for (let i = this._edgeLength - 2; i >= 0; i--) root = nodeHash(hashAt(i), root);
    return root;
  }
}
