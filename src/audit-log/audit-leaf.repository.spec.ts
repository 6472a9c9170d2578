import { placeByIndex } from './audit-leaf.repository';

const hashOf = (k: number) => Buffer.alloc(32, k);
const index = (k: number) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(k));
  return b;
};

describe('placeByIndex (the fast sealing statement returns each hash beside its LeafIndex)', () => {
  it('returns the hashes as they came when they are in order, and puts them in order otherwise', () => {
    const first = 2 ** 33 + 5; // past 32 bits: both halves of an index are read
    const inOrder = Buffer.concat([0, 1, 2, 3].map(hashOf));
    expect(placeByIndex(inOrder, Buffer.concat([0, 1, 2, 3].map((k) => index(first + k))), first)).toBe(inOrder);
    const shuffled = [2, 0, 3, 1];
    const placed = placeByIndex(Buffer.concat(shuffled.map(hashOf)), Buffer.concat(shuffled.map((k) => index(first + k))), first);
    expect(placed.equals(inOrder)).toBe(true);
    const late = [0, 1, 3, 2];
    expect(placeByIndex(Buffer.concat(late.map(hashOf)), Buffer.concat(late.map((k) => index(first + k))), first).equals(inOrder)).toBe(true);
    expect(placeByIndex(Buffer.alloc(0), Buffer.alloc(0), first)).toHaveLength(0);
  });

  it('refuses an index outside the batch or seen twice', () => {
    const hashes = Buffer.concat([0, 1, 2].map(hashOf));
    expect(() => placeByIndex(hashes, Buffer.concat([10, 11, 13].map(index)), 10)).toThrow(/leaf index 13 outside \[10, 13\) or twice/);
    expect(() => placeByIndex(hashes, Buffer.concat([10, 12, 12].map(index)), 10)).toThrow(/leaf index 12 outside/);
    expect(() => placeByIndex(hashes, Buffer.concat([9, 10, 11].map(index)), 10)).toThrow(/leaf index 9 outside/);
    expect(() => placeByIndex(hashes, Buffer.concat([11, 10, 10].map(index)), 10)).toThrow(/leaf index 10 outside/);
  });
});
