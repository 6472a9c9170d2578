// Password transport (service.md 5.4, contract 3): the wire hash is lowercase hex SHA-256 of
// (password + userName); encryption is RSA-OAEP with SHA-256 under the published SPKI key, base64.
// When both apply the hash comes first, then the encryption.
import { api } from './api.js';
import { h } from './dom.js';

function subtle() {
  if (!globalThis.crypto?.subtle) {
    throw new Error('This browser offers no Web Crypto here (the page must be served over HTTPS).');
  }
  return globalThis.crypto.subtle;
}

/** Lowercase hex SHA-256 of `text`. @param {string} text */
export async function sha256Hex(text) {
  const digest = await subtle().digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** @param {string} pem */
function pemToDer(pem) {
  const base64 = pem.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, '').replace(/\s+/g, '');
  const binary = atob(base64);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** `text` under RSA-OAEP SHA-256 with the SPKI key `pem`, base64. @param {string} pem @param {string} text */
export async function encryptRsaOaep(pem, text) {
  const key = await subtle().importKey('spki', pemToDer(pem), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['encrypt']);
  const cipher = new Uint8Array(await subtle().encrypt({ name: 'RSA-OAEP' }, key, new TextEncoder().encode(text)));
  let binary = '';
  for (const byte of cipher) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** @type {Promise<{ enabled?: boolean, publicKey?: string } | undefined> | null} */
let publicKeyPromise = null;

function publicKey() {
  publicKeyPromise ??= api('GET', '/api/Authentication/PasswordPublicKey', undefined, { on401: 'throw' }).then((r) => r.json);
  return publicKeyPromise;
}

/**
 * Learns how this user's passwords travel and answers a function that prepares one value. Asked
 * for every sign-in, since the flag is per user.
 * @param {string} userName
 * @param {{ wirePasswordHash?: boolean }} [options]
 */
export async function passwordProtector(userName, options = {}) {
  const [wire, key] = await Promise.all([
    options.wirePasswordHash !== undefined
      ? Promise.resolve(options.wirePasswordHash)
      : api('POST', '/api/Authentication/WirePasswordHash', { userName }, { on401: 'throw' }).then((r) => r.json.wirePasswordHash === true),
    publicKey(),
  ]);
  return {
    wirePasswordHash: wire,
    /** @param {string} value */
    async protect(value) {
      if (value === undefined || value === null || value === '') return value;
      let result = value;
      if (wire) result = await sha256Hex(result + userName);
      if (key?.enabled && key.publicKey) result = await encryptRsaOaep(key.publicKey, result);
      return result;
    },
  };
}

/**
 * The password rules of contract 3, checked in the browser too (the only check for wire-hash users).
 * @type {{ label: string, test: (password: string) => boolean }[]}
 */
export const PASSWORD_RULES = [
  { label: '12 to 128 characters', test: (p) => Array.from(p).length >= 12 && Array.from(p).length <= 128 },
  { label: 'an upper-case letter', test: (p) => /\p{Lu}/u.test(p) },
  { label: 'a lower-case letter', test: (p) => /\p{Ll}/u.test(p) },
  { label: 'a digit', test: (p) => /\p{Nd}/u.test(p) },
  { label: 'another character (not a letter or digit)', test: (p) => /[^\p{L}\p{Nd}]/u.test(p) },
];

/** The sentences of the rules `password` breaks. @param {string} password */
export function brokenRules(password) {
  return PASSWORD_RULES.filter((rule) => !rule.test(password)).map((rule) => `The new password needs ${rule.label}.`);
}

/** A checklist of the rules that ticks as the user types into `input`. @param {HTMLInputElement} input */
export function rulesChecklist(input) {
  const items = PASSWORD_RULES.map((rule) => ({ rule, li: h('li', {}, rule.label) }));
  const update = () => {
    for (const { rule, li } of items) li.classList.toggle('met', rule.test(input.value));
  };
  input.addEventListener('input', update);
  update();
  return h('div', { class: 'rules', 'data-testid': 'password-rules' }, h('div', { class: 'rules-title' }, 'The new password needs:'), h('ul', {}, items.map((i) => i.li)));
}
