/**
 * Hash, UUID and RSA functions of go-cty-funcs. `bcrypt` is refused with a message: Node has
 * no bcrypt, and a job file that needs one can hash beforehand.
 */
import { constants, createHash, privateDecrypt, randomUUID } from 'node:crypto';
import type { HclFunction } from '../expression-evaluator.js';
import { evalError } from '../hcl-eval-error.js';
import { toStr } from '../hcl-value.js';
import { defineFunction } from './define-function.js';

const UUID_NAMESPACES: Record<string, string> = {
  dns: '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
  url: '6ba7b811-9dad-11d1-80b4-00c04fd430c8',
  oid: '6ba7b812-9dad-11d1-80b4-00c04fd430c8',
  x500: '6ba7b814-9dad-11d1-80b4-00c04fd430c8',
};

function uuidBytes(uuid: string): Buffer {
  if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(uuid)) {
    throw evalError(`uuidv5() namespace must be dns, url, oid, x500 or a UUID, got ${JSON.stringify(uuid)}`);
  }
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}

/** RFC 4122 version 5: SHA-1 of namespace and name. */
function uuidv5(namespace: string, name: string): string {
  const ns = uuidBytes(UUID_NAMESPACES[namespace] ?? namespace);
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function rsadecrypt(ciphertext: string, key: string): string {
  let plain: Buffer;
  try {
    plain = privateDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(ciphertext, 'base64'));
  } catch (err) {
    throw evalError(`failed to decrypt: ${(err as Error).message}`);
  }
  return plain.toString('utf8');
}

const hash = (alg: string): HclFunction => defineFunction(1, 1, ([s]) => createHash(alg).update(toStr(s!), 'utf8').digest('hex'));

/** Crypto and UUID functions by name. */
export const CRYPTO_FUNCTIONS: Readonly<Record<string, HclFunction>> = {
  bcrypt: defineFunction(1, 2, () => {
    throw evalError('bcrypt() is not supported by Caravan: hash the value before writing it into the job file');
  }),
  md5: hash('md5'),
  sha1: hash('sha1'),
  sha256: hash('sha256'),
  sha512: hash('sha512'),
  rsadecrypt: defineFunction(2, 2, ([c, k]) => rsadecrypt(toStr(c!, 'ciphertext'), toStr(k!, 'private key'))),
  uuidv4: defineFunction(0, 0, () => randomUUID()),
  uuidv5: defineFunction(2, 2, ([ns, name]) => uuidv5(toStr(ns!, 'namespace'), toStr(name!, 'name'))),
};
