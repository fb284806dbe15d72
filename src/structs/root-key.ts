/**
 * The keyring's root keys (Nomad's RootKey and RootKeyMeta): RSA key pairs the servers sign
 * workload identities with (RS256, as Nomad 1.7+ signs them for JWKS consumers). The leader
 * makes the first when it takes office; `rotate` makes a new active one and leaves the old
 * ones inactive, still verifying what they signed until an operator removes them. The private
 * half lives only in the replicated state: RootKeyMeta, the JWKS and every API answer are built
 * field by field from the public parts.
 */

/** A root key's state (Nomad's RootKeyState names). */
export const RootKeyState = {
  /** Signs new identities; exactly one key is active once the leader has made one. */
  Active: 'active',
  /** Verifies what it signed; signs nothing new. */
  Inactive: 'inactive',
} as const;
export type RootKeyState = (typeof RootKeyState)[keyof typeof RootKeyState];

/** The signing algorithm of every root key Caravan makes. */
export const ROOT_KEY_ALGORITHM = 'RS256';

/** A root key with its key material (replicated state only; never answered by an API). */
export interface RootKey {
  KeyID: string;
  Algorithm: typeof ROOT_KEY_ALGORITHM;
  State: RootKeyState;
  /** Unix nanoseconds. */
  CreateTime: number;
  CreateIndex: number;
  ModifyIndex: number;
  /** SPKI PEM. */
  PublicKey: string;
  /** PKCS#8 PEM. Secret. */
  PrivateKey: string;
}

/** What the API shows of a root key (Nomad's RootKeyMeta): no key material. */
export interface RootKeyMeta {
  KeyID: string;
  Algorithm: string;
  State: RootKeyState;
  CreateTime: number;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds a prepublished key becomes active; Caravan does not prepublish (0). */
  PublishTime: number;
}

/** The metadata of `key`, copied field by field so no key material can ride along. */
export function rootKeyMeta(key: RootKey): RootKeyMeta {
  return { KeyID: key.KeyID, Algorithm: key.Algorithm, State: key.State, CreateTime: key.CreateTime, CreateIndex: key.CreateIndex, ModifyIndex: key.ModifyIndex, PublishTime: 0 };
}
