/**
 * The workload identity keyring of a server (Nomad's Keyring RPCs): the leader's first key,
 * rotation, removal, listing, and the public documents (JWKS). Key pairs are generated here,
 * before the command is appended, so that replay reproduces them; the private half is written
 * to the log and the state only. Everything answered is built from public parts (rootKeyMeta,
 * publicJwk), never from a RootKey as stored.
 */
import { generateKeyPair, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { ROOT_KEY_ALGORITHM, rootKeyMeta, type RootKey, type RootKeyMeta } from '../../structs/root-key.js';
import { ServerError } from '../server-error.js';
import { Table } from '../state/state-reader.js';
import { publicJwk } from '../identity/workload-identity-token.js';
import type { EndpointContext } from './endpoint-context.js';

const generateRsa = promisify(generateKeyPair);
/** RSA modulus size of the keys (Nomad's root keys are RSA 2048). */
const RSA_BITS = 2048;

/** A JWK of the JWKS document. */
export type PublicJwk = ReturnType<typeof publicJwk>;

/** Options of a rotation (PUT /v1/operator/keyring/rotate). */
export interface RotateOptions {
  /** Nomad re-encrypts every variable with the new key; Caravan's variables are not encrypted by the keyring, so there is nothing to redo. */
  full?: boolean;
  /** Nomad's prepublish duration; Caravan does not prepublish keys (refused, naming the option). */
  prepublish?: string;
}

/** Keyring reads and writes. */
export class KeyringEndpoint {
  private making: Promise<void> | null = null;

  constructor(private readonly ctx: EndpointContext) {}

  /** A fresh key pair (not yet in the keyring). */
  private async newKey(): Promise<RootKey> {
    const { publicKey, privateKey } = await generateRsa('rsa', {
      modulusLength: RSA_BITS,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    return { KeyID: randomUUID(), Algorithm: ROOT_KEY_ALGORITHM, State: 'active', CreateTime: 0, CreateIndex: 0, ModifyIndex: 0, PublicKey: publicKey, PrivateKey: privateKey };
  }

  /**
   * Makes the first active key when the keyring has none (the leader calls it on taking office;
   * a signer that finds no key calls it too). Concurrent calls share one attempt; only the first
   * key applied is kept (OnlyIfNoneActive). NOT_LEADER on a follower.
   */
  async ensureActiveKey(): Promise<RootKey> {
    const have = this.ctx.store.acl.activeRootKey();
    if (have) return have;
    this.making ??= (async () => {
      const key = await this.newKey();
      await this.ctx.apply({ Type: 'RootKeyUpsert', Key: key, OnlyIfNoneActive: true, Now: this.ctx.nowNanos() });
    })().finally(() => (this.making = null));
    await this.making;
    const key = this.ctx.store.acl.activeRootKey();
    if (!key) throw new ServerError('ROOT_KEY_UNAVAILABLE', { reason: 'the new key was not kept' });
    return key;
  }

  /** Makes a new active key; the old one turns inactive and still verifies what it signed. */
  async rotate(opts: RotateOptions = {}): Promise<{ key: RootKeyMeta; index: number }> {
    if (opts.prepublish !== undefined && opts.prepublish !== '') {
      throw new ServerError('KEYRING_REQUEST_INVALID', { reason: 'prepublish: Caravan does not prepublish root keys; rotate with -now' });
    }
    const key = await this.newKey();
    const index = await this.ctx.apply({ Type: 'RootKeyUpsert', Key: key, Now: this.ctx.nowNanos() });
    const stored = this.ctx.store.acl.rootKey(key.KeyID);
    if (!stored) throw new ServerError('ROOT_KEY_UNAVAILABLE', { reason: 'the rotated key was not kept' });
    return { key: rootKeyMeta(stored), index };
  }

  /** Removes an inactive key (identities it signed stop verifying); the active one is refused. */
  async remove(keyId: string): Promise<number> {
    const key = this.ctx.store.acl.rootKey(keyId);
    if (!key) throw new ServerError('ROOT_KEY_NOT_FOUND', { keyId });
    if (key.State === 'active') throw new ServerError('ROOT_KEY_ACTIVE', { keyId });
    return this.ctx.apply({ Type: 'RootKeyDelete', KeyID: keyId });
  }

  /** Every key's metadata, newest first, and the index of the keyring. */
  list(): { keys: RootKeyMeta[]; index: number } {
    return { keys: this.ctx.store.acl.allRootKeys().map(rootKeyMeta), index: this.index() };
  }

  /** The public keys that verify identities (every key of the keyring), as a JWKS. */
  jwks(): { keys: PublicJwk[]; index: number } {
    return { keys: this.ctx.store.acl.allRootKeys().map(publicJwk), index: this.index() };
  }

  /** The server's `oidc_issuer` ("" for none): the issuer of the OIDC discovery document. */
  issuer(): string {
    return this.ctx.config.oidcIssuer ?? '';
  }

  private index(): number {
    return Math.max(1, this.ctx.store.tableIndex(Table.RootKeys));
  }
}
