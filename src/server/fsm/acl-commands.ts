/**
 * The log commands of the ACL tables and how the FSM applies them. Secrets travel inside the
 * commands (they are made by the endpoint, so that replay reproduces them); indexes are
 * stamped here. Nothing here can fail half-way: the endpoint validated every object.
 */
import type { AclPolicy, AclRole, AclToken } from '../../structs/acl.js';
import type { IntroductionSigningKey } from '../../structs/client-introduction.js';
import type { RootKey } from '../../structs/root-key.js';
import { Table } from '../state/state-reader.js';
import type { StateStore } from '../state/state-store.js';

/** The first management token; records the bootstrap's index (Nomad's reset index). */
export interface AclBootstrapCommand {
  Type: 'AclBootstrap';
  Token: AclToken;
  Now: number;
}
export interface AclTokenUpsertCommand {
  Type: 'AclTokenUpsert';
  Tokens: AclToken[];
  Now: number;
}
export interface AclTokenDeleteCommand {
  Type: 'AclTokenDelete';
  AccessorIDs: string[];
}
export interface AclPolicyUpsertCommand {
  Type: 'AclPolicyUpsert';
  Policies: AclPolicy[];
}
export interface AclPolicyDeleteCommand {
  Type: 'AclPolicyDelete';
  Names: string[];
}
export interface AclRoleUpsertCommand {
  Type: 'AclRoleUpsert';
  Roles: AclRole[];
}
export interface AclRoleDeleteCommand {
  Type: 'AclRoleDelete';
  RoleIDs: string[];
}

/**
 * The key client introduction tokens are signed with, made by the leader for the first token.
 * Only the first such command sets it: two racing first mints both end up signing with it.
 */
export interface AclIntroductionKeySetCommand {
  Type: 'AclIntroductionKeySet';
  Key: IntroductionSigningKey;
}

/**
 * Adds a root key to the workload identity keyring as its active key; the key active before
 * becomes inactive (it still verifies what it signed). With OnlyIfNoneActive (the leader's
 * first key, made on taking office) nothing changes when a key is already active, so two racing
 * first keys end with one. The key material is made by the endpoint so replay reproduces it.
 */
export interface RootKeyUpsertCommand {
  Type: 'RootKeyUpsert';
  Key: RootKey;
  OnlyIfNoneActive?: boolean;
  Now: number;
}

/** Removes an inactive root key; an active one is kept (the endpoint refused it already). */
export interface RootKeyDeleteCommand {
  Type: 'RootKeyDelete';
  KeyID: string;
}

export type AclCommand =
  | AclBootstrapCommand
  | AclTokenUpsertCommand
  | AclTokenDeleteCommand
  | AclPolicyUpsertCommand
  | AclPolicyDeleteCommand
  | AclRoleUpsertCommand
  | AclRoleDeleteCommand
  | AclIntroductionKeySetCommand
  | RootKeyUpsertCommand
  | RootKeyDeleteCommand;

const ACL_TYPES = new Set<string>(['AclBootstrap', 'AclTokenUpsert', 'AclTokenDelete', 'AclPolicyUpsert', 'AclPolicyDelete', 'AclRoleUpsert', 'AclRoleDelete', 'AclIntroductionKeySet', 'RootKeyUpsert', 'RootKeyDelete']);

/** True for the ACL commands. */
export function isAclCommand(cmd: { Type: string }): cmd is AclCommand {
  return ACL_TYPES.has(cmd.Type);
}

/** The shape problem of an ACL command (the field), or undefined when it is well formed. */
export function aclCommandProblem(cmd: AclCommand): string | undefined {
  const list = (v: unknown, key: string): boolean => Array.isArray(v) && v.every((x) => typeof x === 'object' && x !== null && typeof (x as Record<string, unknown>)[key] === 'string');
  const strings = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'string');
  switch (cmd.Type) {
    case 'AclBootstrap':
      return list([cmd.Token], 'SecretID') ? undefined : 'Token';
    case 'AclTokenUpsert':
      return list(cmd.Tokens, 'SecretID') && list(cmd.Tokens, 'AccessorID') ? undefined : 'Tokens';
    case 'AclTokenDelete':
      return strings(cmd.AccessorIDs) ? undefined : 'AccessorIDs';
    case 'AclPolicyUpsert':
      return list(cmd.Policies, 'Name') ? undefined : 'Policies';
    case 'AclPolicyDelete':
      return strings(cmd.Names) ? undefined : 'Names';
    case 'AclRoleUpsert':
      return list(cmd.Roles, 'ID') ? undefined : 'Roles';
    case 'AclRoleDelete':
      return strings(cmd.RoleIDs) ? undefined : 'RoleIDs';
    case 'AclIntroductionKeySet':
      return list([cmd.Key], 'KeyID') && list([cmd.Key], 'Key') ? undefined : 'Key';
    case 'RootKeyUpsert':
      return list([cmd.Key], 'KeyID') && list([cmd.Key], 'PublicKey') && list([cmd.Key], 'PrivateKey') ? undefined : 'Key';
    case 'RootKeyDelete':
      return typeof cmd.KeyID === 'string' ? undefined : 'KeyID';
    default:
      return undefined;
  }
}

/** Applies one ACL command at `index`. */
export function applyAclCommand(state: StateStore, cmd: AclCommand, index: number): void {
  const acl = state.acl;
  const stamp = <T extends { CreateIndex: number; ModifyIndex: number }>(v: T, prev: { CreateIndex: number } | undefined): T => ({ ...v, CreateIndex: prev?.CreateIndex ?? index, ModifyIndex: index });
  switch (cmd.Type) {
    case 'AclBootstrap':
      acl.putToken(stamp(cmd.Token, undefined));
      acl.bootstrapIndex = index;
      state.touch(index, Table.AclTokens);
      break;
    case 'AclTokenUpsert':
      for (const t of cmd.Tokens) acl.putToken(stamp(t, acl.tokenByAccessor(t.AccessorID)));
      state.touch(index, Table.AclTokens);
      break;
    case 'AclTokenDelete':
      for (const id of cmd.AccessorIDs) acl.deleteToken(id);
      state.touch(index, Table.AclTokens);
      break;
    case 'AclPolicyUpsert':
      for (const p of cmd.Policies) acl.putPolicy(stamp(p, acl.policy(p.Name)));
      state.touch(index, Table.AclPolicies);
      break;
    case 'AclPolicyDelete':
      for (const n of cmd.Names) acl.deletePolicy(n);
      state.touch(index, Table.AclPolicies);
      break;
    case 'AclRoleUpsert':
      for (const r of cmd.Roles) acl.putRole(stamp(r, acl.role(r.ID)));
      state.touch(index, Table.AclRoles);
      break;
    case 'AclRoleDelete':
      for (const id of cmd.RoleIDs) acl.deleteRole(id);
      state.touch(index, Table.AclRoles);
      break;
    case 'AclIntroductionKeySet':
      acl.introductionKey ??= { ...cmd.Key, CreateIndex: index };
      break;
    case 'RootKeyUpsert': {
      const active = acl.activeRootKey();
      if (cmd.OnlyIfNoneActive && active) break;
      if (active) acl.putRootKey({ ...active, State: 'inactive', ModifyIndex: index });
      acl.putRootKey({ ...cmd.Key, State: 'active', CreateTime: cmd.Now, CreateIndex: index, ModifyIndex: index });
      state.touch(index, Table.RootKeys);
      break;
    }
    case 'RootKeyDelete': {
      const key = acl.rootKey(cmd.KeyID);
      if (!key || key.State === 'active') break;
      acl.deleteRootKey(cmd.KeyID);
      state.touch(index, Table.RootKeys);
      break;
    }
    default: {
      const never: never = cmd;
      throw new Error(`unknown ACL command ${(never as { Type: string }).Type}`);
    }
  }
}
