import { createPrivateKey, generateKeyPairSync, sign as edSign } from 'node:crypto';
import { auditReferenceVectors, fromBase64 } from '../../test/helpers/audit-reference';
import { checkpointBody, keyId, openNote, parseCheckpoint, parseVerifierKey, rawPublicKey, signCheckpoint, verifierKey } from './note';

/** The example of Go's golang.org/x/mod/sumdb/note package documentation (a note not signed by us). */
const NEUMANN_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const NEUMANN_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const NEUMANN_NOTE = `${NEUMANN_TEXT}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;
const ENOCH_LINE = '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';

describe('signed notes and checkpoints (C2SP signed-note, tlog-checkpoint)', () => {
  const vectors = auditReferenceVectors();
  const { Key } = vectors;
  const privateKey = createPrivateKey(Key.privateKeyPem);

  it("derives Go's key id and verifier key from the fixed seed", () => {
    const raw = rawPublicKey(privateKey);
    expect(raw.toString('base64')).toBe(Key.publicKey);
    expect(keyId(Key.origin, raw).toString('hex')).toBe(Key.keyId);
    expect(verifierKey(Key.origin, raw)).toBe(Key.verifierKey);
    expect(parseVerifierKey(Key.verifierKey)).toEqual({ name: Key.origin, keyId: Buffer.from(Key.keyId, 'hex'), publicKey: raw });
  });

  it("signs every checkpoint byte for byte as Go's note.Sign does, and opens Go's notes", () => {
    expect(vectors.Checkpoints.length).toBe(vectors.Leaves.length + 1);
    for (const checkpoint of vectors.Checkpoints) {
      const root = fromBase64(checkpoint.RootHash);
      expect(signCheckpoint(Key.origin, checkpoint.TreeSize, root, privateKey)).toBe(checkpoint.Note);
      expect(checkpoint.Note.startsWith(checkpointBody(Key.origin, checkpoint.TreeSize, root))).toBe(true);
      expect(parseCheckpoint(checkpoint.Note, Key.verifierKey)).toEqual({ origin: Key.origin, treeSize: checkpoint.TreeSize, rootHash: root });
    }
  });

  it("opens the package example of Go's sumdb/note, also with a second signer's line", () => {
    expect(openNote(NEUMANN_NOTE, NEUMANN_VKEY)).toBe(NEUMANN_TEXT);
    expect(openNote(`${NEUMANN_NOTE}${ENOCH_LINE}`, NEUMANN_VKEY)).toBe(NEUMANN_TEXT);
    expect(() => parseCheckpoint(NEUMANN_NOTE, NEUMANN_VKEY)).toThrow(/checkpoint/);
  });

  it('refuses a note whose body, signature or key was changed', () => {
    const note = vectors.Checkpoints[5].Note;
    const other = generateKeyPairSync('ed25519').privateKey;
    const otherVkey = verifierKey(Key.origin, rawPublicKey(other));
    const cases: Array<[string, string, RegExp]> = [
      [note.replace('\n5\n', '\n6\n'), Key.verifierKey, /does not verify/],
      [note.replace(vectors.Checkpoints[5].RootHash, vectors.Checkpoints[4].RootHash), Key.verifierKey, /does not verify/],
      [note.slice(0, -10) + (note.slice(-10, -9) === 'A' ? 'B' : 'A') + note.slice(-9), Key.verifierKey, /does not verify|malformed/],
      [note, otherVkey, /not signed by/],
      [signCheckpoint(Key.origin, 5, fromBase64(vectors.Checkpoints[5].RootHash), other), Key.verifierKey, /not signed by/],
      [note.replace('— ', '- '), Key.verifierKey, /em dash/],
      [note.replace('\n\n', '\n'), Key.verifierKey, /blank line|em dash|malformed/],
      [note.slice(0, -1), Key.verifierKey, /newline/],
      [note.replace('\n5\n', '\n5\r\n'), Key.verifierKey, /control character/],
    ];
    for (const [bad, key, message] of cases) expect(() => parseCheckpoint(bad, key)).toThrow(message);
  });

  it('refuses a well-signed note that is not a checkpoint of this origin', () => {
    const raw = rawPublicKey(privateKey);
    const sign = (body: string): string => {
      const sig = edSign(null, Buffer.from(body), privateKey);
      return `${body}\n— ${Key.origin} ${Buffer.concat([keyId(Key.origin, raw), sig]).toString('base64')}\n`;
    };
    const root = vectors.Checkpoints[2].RootHash;
    expect(parseCheckpoint(sign(`${Key.origin}\n2\n${root}\nextension line\n`), Key.verifierKey).treeSize).toBe(2);
    expect(() => parseCheckpoint(sign(`other/log\n2\n${root}\n`), Key.verifierKey)).toThrow(/origin/);
    expect(() => parseCheckpoint(sign(`${Key.origin}\n02\n${root}\n`), Key.verifierKey)).toThrow(/tree size/);
    expect(() => parseCheckpoint(sign(`${Key.origin}\n-1\n${root}\n`), Key.verifierKey)).toThrow(/tree size/);
    expect(() => parseCheckpoint(sign(`${Key.origin}\n2\n${root.slice(0, -4)}\n`), Key.verifierKey)).toThrow(/root hash/);
    expect(() => parseCheckpoint(sign(`${Key.origin}\n2\n`), Key.verifierKey)).toThrow(/three lines/);
  });

  it('refuses malformed verifier keys', () => {
    const [, name, id, key] = /^([^+]+)\+([^+]+)\+(.+)$/.exec(Key.verifierKey)!;
    expect(() => parseVerifierKey(`${name}+${id}`)).toThrow(/expected/);
    expect(() => parseVerifierKey(`${name}+00000000+${key}`)).toThrow(/key id does not match/);
    expect(() => parseVerifierKey(`other+${id}+${key}`)).toThrow(/key id does not match/);
    expect(() => parseVerifierKey(`${name}+${id}+${Buffer.concat([Buffer.from([2]), fromBase64(Key.publicKey)]).toString('base64')}`)).toThrow(/Ed25519/);
    expect(() => parseVerifierKey(`a b+${id}+${key}`)).toThrow(/name/);
    expect(() => verifierKey('has space', fromBase64(Key.publicKey))).toThrow(/key name/);
  });
});
