import { auditReferenceVectors, fromBase64 } from '../../test/helpers/audit-reference';
import {
  CompactRange,
  EMPTY_ROOT,
  consistencyProof,
  inclusionProof,
  leafHash,
  nodeHash,
  rootOf,
  subtreeHash,
  verifyConsistency,
  verifyInclusion,
  type PerfectSubtree,
} from './merkle';

const hex = (text: string): Buffer => Buffer.from(text, 'hex');

/**
 * transparency-dev/merkle testonly/constants.go: RFC 6962 leaf inputs, the perfect-subtree hashes and
 * the roots of every tree size 0..8, published by the Certificate Transparency maintainers.
 */
const CT_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(hex);
const CT_ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const CT_NODES = [
  ['6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
    '0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7', '07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7',
    'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b', '4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658',
    'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f', '46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1'],
  ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
    '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0'],
  ['d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4'],
  ['5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328'],
];

/** A PerfectSubtree answered from the hashes a CompactRange reported, as the sealer's storage would. */
function storeOf(leafHashes: readonly Buffer[]): { perfect: PerfectSubtree; stored: Map<string, Buffer>; reads: () => number } {
  const stored = new Map<string, Buffer>();
  const range = new CompactRange(0, []);
  for (const h of leafHashes) range.append(h, (level, index, hash) => stored.set(`${level}/${index}`, hash));
  let reads = 0;
  const perfect: PerfectSubtree = async (level, index) => {
    reads += 1;
    const hash = stored.get(`${level}/${index}`);
    if (!hash) throw new Error(`no perfect subtree ${level}/${index}`);
    return hash;
  };
  return { perfect, stored, reads: () => reads };
}

describe('Merkle tree (RFC 6962 section 2.1)', () => {
  it('gets the published CT roots and subtree hashes of the 8-leaf test tree (transparency-dev/merkle)', async () => {
    const leaves = CT_LEAVES.map(leafHash);
    expect(EMPTY_ROOT.toString('hex')).toBe(CT_ROOTS[0]);
    for (let n = 0; n <= 8; n++) expect(rootOf(leaves.slice(0, n)).toString('hex')).toBe(CT_ROOTS[n]);
    const { stored, perfect } = storeOf(leaves);
    CT_NODES.forEach((level, l) => level.forEach((h, i) => expect(stored.get(`${l}/${i}`)?.toString('hex')).toBe(h)));
    for (let n = 0; n <= 8; n++) expect((await subtreeHash(0, n, perfect)).toString('hex')).toBe(CT_ROOTS[n]);
  });

  it('keeps the right edge as compact.Tree does (transparency-dev CompactTrees)', () => {
    const range = new CompactRange(0, []);
    expect(range.edge).toEqual([]);
    const expectedEdges = [[], [CT_NODES[0][0]], [CT_NODES[1][0]], [CT_NODES[1][0], CT_NODES[0][2]], [CT_NODES[2][0]],
      [CT_NODES[2][0], CT_NODES[0][4]], [CT_NODES[2][0], CT_NODES[1][2]], [CT_NODES[2][0], CT_NODES[1][2], CT_NODES[0][6]], [CT_NODES[3][0]]];
    CT_LEAVES.forEach((leaf, i) => {
      range.append(leafHash(leaf));
      expect(range.size).toBe(i + 1);
      expect(range.edge.map((h) => h.toString('hex'))).toEqual(expectedEdges[i + 1]);
    });
    // Resuming from a stored edge gives the same roots as building from nothing.
    const resumed = new CompactRange(3, [hex(CT_NODES[1][0]), hex(CT_NODES[0][2])]);
    for (const leaf of CT_LEAVES.slice(3)) resumed.append(leafHash(leaf));
    expect(resumed.root().toString('hex')).toBe(CT_ROOTS[8]);
    expect(() => new CompactRange(3, [hex(CT_NODES[1][0])])).toThrow(/2 edge hashes/);
  });

  it('matches Go sumdb/tlog: leaf hashes, the root of every size, every inclusion and consistency proof', async () => {
    const vectors = auditReferenceVectors();
    const leaves = vectors.Leaves.map((leaf) => leafHash(fromBase64(leaf.LeafRecord)));
    leaves.forEach((h, i) => expect(h.toString('base64')).toBe(vectors.Leaves[i].LeafHash));
    const { perfect } = storeOf(leaves);
    expect(vectors.Roots).toHaveLength(leaves.length + 1);
    const range = new CompactRange(0, []);
    for (let n = 0; n <= leaves.length; n++) {
      expect(rootOf(leaves.slice(0, n)).toString('base64')).toBe(vectors.Roots[n]);
      expect(range.root().toString('base64')).toBe(vectors.Roots[n]);
      expect((await subtreeHash(0, n, perfect)).toString('base64')).toBe(vectors.Roots[n]);
      if (n < leaves.length) range.append(leaves[n]);
    }
    expect(vectors.Inclusion.length).toBe((leaves.length * (leaves.length + 1)) / 2);
    for (const { Index, TreeSize, Proof } of vectors.Inclusion) {
      const proof = await inclusionProof(Index, TreeSize, perfect);
      expect(proof.map((h) => h.toString('base64'))).toEqual(Proof);
      expect(verifyInclusion(Index, TreeSize, leaves[Index], proof, fromBase64(vectors.Roots[TreeSize]))).toBe(true);
    }
    for (const { First, Second, Proof } of vectors.Consistency) {
      const proof = await consistencyProof(First, Second, perfect);
      expect(proof.map((h) => h.toString('base64'))).toEqual(Proof);
      expect(verifyConsistency(First, Second, fromBase64(vectors.Roots[First]), fromBase64(vectors.Roots[Second]), proof)).toBe(true);
    }
  });

  it('refuses every altered inclusion proof', async () => {
    const leaves = Array.from({ length: 13 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    const { perfect } = storeOf(leaves);
    const root = rootOf(leaves);
    for (let index = 0; index < leaves.length; index++) {
      const proof = await inclusionProof(index, leaves.length, perfect);
      expect(verifyInclusion(index, leaves.length, leaves[index], proof, root)).toBe(true);
      expect(verifyInclusion(index, leaves.length, leaves[(index + 1) % leaves.length], proof, root)).toBe(false);
      expect(verifyInclusion((index + 1) % leaves.length, leaves.length, leaves[index], proof, root)).toBe(false);
      expect(verifyInclusion(index, 1, leaves[index], proof, root)).toBe(false);
      expect(verifyInclusion(index, leaves.length, leaves[index], proof.slice(1), root)).toBe(false);
      expect(verifyInclusion(index, leaves.length, leaves[index], [...proof, root], root)).toBe(false);
      for (let i = 0; i < proof.length; i++) {
        const bent = proof.map((h, j) => (j === i ? nodeHash(h, h) : h));
        expect(verifyInclusion(index, leaves.length, leaves[index], bent, root)).toBe(false);
      }
    }
    expect(verifyInclusion(13, 13, leaves[0], [], root)).toBe(false);
    await expect(inclusionProof(13, 13, perfect)).rejects.toThrow(/not in a tree/);
  });

  it('refuses every altered consistency proof, and a rewritten first tree', async () => {
    const leaves = Array.from({ length: 11 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    const { perfect } = storeOf(leaves);
    const roots = Array.from({ length: 12 }, (_, n) => rootOf(leaves.slice(0, n)));
    const rewritten = rootOf([leafHash(Buffer.from('forged')), ...leaves.slice(1, 5)]);
    expect(verifyConsistency(0, 11, EMPTY_ROOT, roots[11], [])).toBe(true);
    expect(verifyConsistency(0, 11, roots[3], roots[11], [])).toBe(false);
    for (let first = 1; first <= 11; first++) {
      const proof = await consistencyProof(first, 11, perfect);
      expect(verifyConsistency(first, 11, roots[first], roots[11], proof)).toBe(true);
      if (first < 11) {
        expect(verifyConsistency(first, 11, roots[first], roots[10], proof)).toBe(false);
        expect(verifyConsistency(first, 11, roots[11], roots[11], proof)).toBe(false);
        expect(verifyConsistency(first, 11, roots[first], roots[11], proof.slice(0, -1))).toBe(false);
        expect(verifyConsistency(first, 11, roots[first], roots[11], [])).toBe(false);
        for (let i = 0; i < proof.length; i++) {
          const bent = proof.map((h, j) => (j === i ? nodeHash(h, h) : h));
          expect(verifyConsistency(first, 11, roots[first], roots[11], bent)).toBe(false);
        }
      }
    }
    expect(verifyConsistency(5, 11, rewritten, roots[11], await consistencyProof(5, 11, perfect))).toBe(false);
    expect(verifyConsistency(11, 11, roots[11], roots[10], [])).toBe(false);
    expect(verifyConsistency(7, 5, roots[7], roots[5], [])).toBe(false);
  });

  it('appends many leaves from one buffer exactly as one at a time, from any size, reporting only the levels asked', () => {
    const leaves = Array.from({ length: 300 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    for (const start of [0, 1, 5, 64, 77]) {
      const one = new CompactRange(0, []);
      const oneNodes: string[] = [];
      leaves.forEach((h, i) => one.append(h, (level, index, hash) => i >= start && level % 4 === 0 && level > 0 && oneNodes.push(`${level}/${index}/${hash.toString('hex')}`)));
      const many = new CompactRange(0, []);
      for (const h of leaves.slice(0, start)) many.append(h);
      const manyNodes: string[] = [];
      const resumed = new CompactRange(start, [...many.edge]);
      // In two pieces, as the sealer hands them over between turns of the event loop.
      const rest = Buffer.concat(leaves.slice(start));
      const cut = 32 * 100;
      const report = (level: number, index: number, hash: Buffer) => manyNodes.push(`${level}/${index}/${hash.toString('hex')}`);
      resumed.appendAll(rest.subarray(0, cut), report, (level) => level % 4 === 0 && level > 0);
      resumed.appendAll(rest.subarray(cut), report, (level) => level % 4 === 0 && level > 0);
      expect(resumed.size).toBe(leaves.length);
      expect(resumed.root().equals(one.root())).toBe(true);
      expect(resumed.root().equals(rootOf(leaves))).toBe(true);
      expect(resumed.edge.map((h) => h.toString('hex'))).toEqual(one.edge.map((h) => h.toString('hex')));
      expect(manyNodes).toEqual(oneNodes);
      expect(manyNodes.length).toBeGreaterThan(0);
    }
    // A reported hash is the caller's own: appending more never changes it.
    const range = new CompactRange(0, []);
    const seen: Buffer[] = [];
    range.appendAll(Buffer.concat(leaves.slice(0, 2)), (_level, _index, hash) => seen.push(hash));
    const copy = Buffer.concat(seen);
    range.appendAll(Buffer.concat(leaves.slice(2, 40)));
    expect(Buffer.concat(seen).equals(copy)).toBe(true);
    expect(() => range.appendAll(Buffer.alloc(31))).toThrow(/32 bytes/);
  });

  it('reaches storage O(log n) times for a root of a large tree, never leaf by leaf', async () => {
    // A fake storage that answers any perfect subtree: the count of reads is what is measured.
    let reads = 0;
    const perfect: PerfectSubtree = async (level, index) => {
      reads += 1;
      return nodeHash(Buffer.alloc(32, level), Buffer.from(String(index).padStart(32, '0')));
    };
    await subtreeHash(0, 10_000_001, perfect);
    expect(reads).toBeLessThanOrEqual(24);
    reads = 0;
    const proof = await inclusionProof(9_999_999, 10_000_001, perfect);
    expect(proof.length).toBeLessThanOrEqual(25);
    expect(reads).toBeLessThanOrEqual(2 * 24 * 2);
  });
});
