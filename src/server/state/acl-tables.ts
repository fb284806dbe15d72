/**
 * The ACL tables of the state store: tokens (by accessor, with a secret → accessor index),
 * policies (by name), roles (by ID, with a name index), the index of the bootstrap (Nomad's
 * reset index), and the key that signs client introduction tokens (the identity side of ACLs,
 * as Nomad's /v1/acl/identity/ endpoint). Written by the FSM only; values are replaced, never
 * mutated, so readers may keep what they got.
 */
import type { AclPolicy, AclRole, AclToken } from '../../structs/acl.js';
import type { IntroductionSigningKey } from '../../structs/client-introduction.js';
import type { RootKey } from '../../structs/root-key.js';

/** The ACL tables as persisted in snapshots. */
export interface SerializedAcl {
  tokens: AclToken[];
  policies: AclPolicy[];
  roles: AclRole[];
  bootstrapIndex: number;
  /** Absent before client introduction, or before the first introduction token was minted. */
  introductionKey?: IntroductionSigningKey;
  /** The workload identity keyring; absent before the first leader made a key. */
  rootKeys?: RootKey[];
}

/** Tokens, policies, roles. */
export class AclTables {
  private readonly tokens = new Map<string, AclToken>();
  private readonly bySecret = new Map<string, string>();
  private readonly policies = new Map<string, AclPolicy>();
  private readonly roles = new Map<string, AclRole>();
  /** The index of the last bootstrap (0: never bootstrapped). */
  bootstrapIndex = 0;
  /** The key introduction tokens are signed with; undefined until the first is minted. Secret. */
  introductionKey: IntroductionSigningKey | undefined = undefined;
  /** The workload identity keyring by KeyID (root-key.ts). Holds private keys: never answered as is. */
  private readonly rootKeys = new Map<string, RootKey>();

  // ---- reads ----

  tokenByAccessor(id: string): AclToken | undefined {
    return this.tokens.get(id);
  }

  tokenBySecret(secret: string): AclToken | undefined {
    const id = this.bySecret.get(secret);
    return id === undefined ? undefined : this.tokens.get(id);
  }

  /** Every token, by accessor ID. */
  allTokens(): AclToken[] {
    return [...this.tokens.values()].sort((a, b) => (a.AccessorID < b.AccessorID ? -1 : 1));
  }

  policy(name: string): AclPolicy | undefined {
    return this.policies.get(name);
  }

  allPolicies(): AclPolicy[] {
    return [...this.policies.values()].sort((a, b) => (a.Name < b.Name ? -1 : 1));
  }

  role(id: string): AclRole | undefined {
    return this.roles.get(id);
  }

  roleByName(name: string): AclRole | undefined {
    for (const r of this.roles.values()) if (r.Name === name) return r;
    return undefined;
  }

  allRoles(): AclRole[] {
    return [...this.roles.values()].sort((a, b) => (a.Name < b.Name ? -1 : 1));
  }

  rootKey(id: string): RootKey | undefined {
    return this.rootKeys.get(id);
  }

  /** Every root key, newest first. */
  allRootKeys(): RootKey[] {
    return [...this.rootKeys.values()].sort((a, b) => b.CreateIndex - a.CreateIndex || (a.KeyID < b.KeyID ? -1 : 1));
  }

  /** The key that signs new identities (undefined before the first leader made one). */
  activeRootKey(): RootKey | undefined {
    for (const k of this.rootKeys.values()) if (k.State === 'active') return k;
    return undefined;
  }

  // ---- writes (FSM only) ----

  putRootKey(k: RootKey): void {
    this.rootKeys.set(k.KeyID, k);
  }

  deleteRootKey(id: string): void {
    this.rootKeys.delete(id);
  }

  putToken(t: AclToken): void {
    const prev = this.tokens.get(t.AccessorID);
    if (prev && prev.SecretID !== t.SecretID) this.bySecret.delete(prev.SecretID);
    this.tokens.set(t.AccessorID, t);
    this.bySecret.set(t.SecretID, t.AccessorID);
  }

  deleteToken(accessor: string): void {
    const prev = this.tokens.get(accessor);
    if (!prev) return;
    this.tokens.delete(accessor);
    this.bySecret.delete(prev.SecretID);
  }

  putPolicy(p: AclPolicy): void {
    this.policies.set(p.Name, p);
  }

  deletePolicy(name: string): void {
    this.policies.delete(name);
  }

  putRole(r: AclRole): void {
    this.roles.set(r.ID, r);
  }

  deleteRole(id: string): void {
    this.roles.delete(id);
  }

  // ---- persistence ----

  serialize(): SerializedAcl {
    return {
      tokens: [...this.tokens.values()],
      policies: [...this.policies.values()],
      roles: [...this.roles.values()],
      bootstrapIndex: this.bootstrapIndex,
      ...(this.introductionKey ? { introductionKey: this.introductionKey } : {}),
      ...(this.rootKeys.size > 0 ? { rootKeys: [...this.rootKeys.values()] } : {}),
    };
  }

  restore(s: SerializedAcl | undefined): void {
    this.tokens.clear();
    this.bySecret.clear();
    this.policies.clear();
    this.roles.clear();
    this.rootKeys.clear();
    for (const k of s?.rootKeys ?? []) this.rootKeys.set(k.KeyID, k);
    this.bootstrapIndex = s?.bootstrapIndex ?? 0;
    this.introductionKey = s?.introductionKey;
    for (const t of s?.tokens ?? []) this.putToken(t);
    for (const p of s?.policies ?? []) this.putPolicy(p);
    for (const r of s?.roles ?? []) this.putRole(r);
  }
}
