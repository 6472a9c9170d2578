import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/**
 * Checkpoints as C2SP signed notes (c2sp.org/signed-note, c2sp.org/tlog-checkpoint), Ed25519 only
 * (algorithm byte 0x01). Pure: keys come in as KeyObjects. The rules of parsing follow Go's
 * golang.org/x/mod/sumdb/note, the reference implementation, so a note accepted here is accepted there.
 */

const ALG_ED25519 = 0x01;
const SIGNATURE_PREFIX = '— ';
/** Bounds what a caller-supplied note can make us parse; a checkpoint note is a few hundred bytes. */
const MAX_NOTE_BYTES = 1_000_000;
const MAX_SIGNATURES = 100;
/** The 32 raw bytes follow this fixed 12-byte DER prefix in an Ed25519 SubjectPublicKeyInfo (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The 32 raw Ed25519 bytes. */
export function rawPublicKey(publicKey: KeyObject): Buffer {
  const key = publicKey.type === 'private' ? createPublicKey(publicKey) : publicKey;
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`expected an Ed25519 key, got ${key.asymmetricKeyType ?? key.type}`);
  const der = key.export({ format: 'der', type: 'spki' });
  return Buffer.from(der.subarray(ED25519_SPKI_PREFIX.length));
}

/** A KeyObject for 32 raw Ed25519 public-key bytes. */
export function publicKeyFromRaw(raw: Buffer): KeyObject {
  if (raw.length !== 32) throw new Error(`an Ed25519 public key has 32 bytes, got ${raw.length}`);
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** No lone surrogate: the text survives a round trip through UTF-8. */
function isWellFormed(text: string): boolean {
  return Buffer.from(text, 'utf8').toString('utf8') === text;
}

/** signed-note key name rules: non-empty, no Unicode space, no '+'. */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u.test(name) && isWellFormed(name);
}

/** First 4 bytes of SHA-256(origin || 0x0A || 0x01 || key). */
export function keyId(origin: string, rawPublicKey: Buffer): Buffer {
  if (rawPublicKey.length !== 32) throw new Error(`an Ed25519 public key has 32 bytes, got ${rawPublicKey.length}`);
  return createHash('sha256')
    .update(Buffer.from(`${origin}\n`, 'utf8'))
    .update(Buffer.from([ALG_ED25519]))
    .update(rawPublicKey)
    .digest()
    .subarray(0, 4);
}

/** <origin>+<keyId hex>+<base64(0x01||key)>: the signed-note verifier key. */
export function verifierKey(origin: string, rawPublicKey: Buffer): string {
  if (!isValidKeyName(origin)) throw new Error(`not a valid signed-note key name: ${JSON.stringify(origin)}`);
  return `${origin}+${keyId(origin, rawPublicKey).toString('hex')}+${Buffer.concat([Buffer.from([ALG_ED25519]), rawPublicKey]).toString('base64')}`;
}

/** Parses a verifier key, checking its key id against its name and key (as Go's note.NewVerifier does). */
export function parseVerifierKey(vkey: string): { name: string; keyId: Buffer; publicKey: Buffer } {
  // Split at the first two '+' only, as Go's chop does: standard base64 may hold '+' itself.
  const match = /^([^+]*)\+([^+]*)\+(.*)$/s.exec(vkey.trim());
  if (!match) throw new Error('verifier key: expected <name>+<key id hex>+<base64 key>');
  const [, name, idHex, keyB64] = match;
  if (!isValidKeyName(name)) throw new Error('verifier key: the name is empty or holds a space');
  if (!/^[0-9a-f]{8}$/i.test(idHex)) throw new Error('verifier key: the key id is not 8 hex digits');
  const key = Buffer.from(keyB64, 'base64');
  if (key.toString('base64') !== keyB64) throw new Error('verifier key: the key is not standard base64');
  if (key.length !== 33 || key[0] !== ALG_ED25519) throw new Error('verifier key: not an Ed25519 key (algorithm 1, 32 bytes)');
  const publicKey = Buffer.from(key.subarray(1));
  const id = keyId(name, publicKey);
  if (id.toString('hex') !== idHex.toLowerCase()) throw new Error('verifier key: the key id does not match the name and key');
  return { name, keyId: id, publicKey };
}

/** "<origin>\n<size>\n<b64 root>\n". */
export function checkpointBody(origin: string, treeSize: number, rootHash: Buffer): string {
  if (!isValidKeyName(origin)) throw new Error(`not a valid checkpoint origin: ${JSON.stringify(origin)}`);
  if (!Number.isSafeInteger(treeSize) || treeSize < 0) throw new Error(`not a tree size: ${treeSize}`);
  if (rootHash.length !== 32) throw new Error(`a root hash has 32 bytes, got ${rootHash.length}`);
  return `${origin}\n${treeSize}\n${rootHash.toString('base64')}\n`;
}

/** The whole note: the body, an empty line, then "— <origin> <base64(key id || Ed25519 signature)>\n". */
export function signCheckpoint(origin: string, treeSize: number, rootHash: Buffer, privateKey: KeyObject): string {
  const body = checkpointBody(origin, treeSize, rootHash);
  const id = keyId(origin, rawPublicKey(privateKey));
  const signature = sign(null, Buffer.from(body, 'utf8'), privateKey);
  return `${body}\n${SIGNATURE_PREFIX}${origin} ${Buffer.concat([id, signature]).toString('base64')}\n`;
}

/**
 * Opens a signed note with one trusted key (Go's note.Open with one verifier): the text, and whether
 * that key signed it. Signature lines of other keys are allowed and ignored, as the spec says; a line
 * of this key whose signature fails is an error, never skipped.
 */
export function openNote(note: string, vkey: string): string {
  const key = parseVerifierKey(vkey);
  if (Buffer.byteLength(note, 'utf8') > MAX_NOTE_BYTES) throw new Error('note: too large');
  // Control characters other than newline, and lone surrogates (invalid UTF-8), are malformed.
  if (/[\x00-\x09\x0b-\x1f]/.test(note) || !isWellFormed(note)) throw new Error('note: holds a control character or invalid UTF-8');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new Error('note: no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const signatures = note.slice(split + 2);
  if (signatures.length === 0 || !signatures.endsWith('\n')) throw new Error('note: the signature block does not end in a newline');
  const lines = signatures.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new Error('note: too many signatures');
  let signed = false;
  for (const line of lines) {
    if (!line.startsWith(SIGNATURE_PREFIX)) throw new Error('note: a signature line does not start with an em dash and a space');
    const rest = line.slice(SIGNATURE_PREFIX.length);
    const space = rest.indexOf(' ');
    const name = space < 0 ? rest : rest.slice(0, space);
    const b64 = space < 0 ? '' : rest.slice(space + 1);
    const raw = Buffer.from(b64, 'base64');
    if (!isValidKeyName(name) || b64 === '' || raw.toString('base64') !== b64 || raw.length < 5) throw new Error('note: a malformed signature line');
    if (name !== key.name || !raw.subarray(0, 4).equals(key.keyId)) continue;
    if (!verify(null, Buffer.from(text, 'utf8'), publicKeyFromRaw(key.publicKey), raw.subarray(4))) {
      throw new Error(`note: the signature of ${key.name}+${key.keyId.toString('hex')} does not verify`);
    }
    signed = true;
  }
  if (!signed) throw new Error(`note: not signed by ${key.name}+${key.keyId.toString('hex')}`);
  return text;
}

/**
 * Verifies a checkpoint note against a verifier key and reads it (c2sp.org/tlog-checkpoint): origin
 * line, decimal tree size, base64 root hash, optional extension lines. The origin must be the key's
 * name: a note about another log signed with this key is not a checkpoint of this log.
 * Throws an Error naming what is wrong.
 */
export function parseCheckpoint(note: string, verifierKey: string): { origin: string; treeSize: number; rootHash: Buffer } {
  const text = openNote(note, verifierKey);
  const lines = text.split('\n');
  // text ends in '\n', so the last element is ''; at least origin, size and root before it.
  if (lines.length < 4) throw new Error('checkpoint: fewer than three lines');
  const [origin, size, root] = lines;
  const extensions = lines.slice(3, -1);
  if (extensions.some((line) => line === '')) throw new Error('checkpoint: an empty extension line');
  if (origin !== parseVerifierKey(verifierKey).name) throw new Error(`checkpoint: origin ${JSON.stringify(origin)} is not the key's name`);
  if (!/^(0|[1-9]\d*)$/.test(size) || !Number.isSafeInteger(Number(size))) throw new Error(`checkpoint: tree size ${JSON.stringify(size)} is not a decimal number`);
  const rootHash = Buffer.from(root, 'base64');
  if (rootHash.length !== 32 || rootHash.toString('base64') !== root) throw new Error('checkpoint: the root hash is not 32 bytes of standard base64');
  return { origin, treeSize: Number(size), rootHash };
}
