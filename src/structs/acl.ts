/**
 * Nomad's ACL objects as its API answers them: tokens, policies and roles, their list stubs,
 * and the anonymous token. A token's SecretID is its credential: it leaves the server only in
 * the answer that creates the token and to the token's own holder (or a management token).
 */
import { GO_ZERO_TIME } from './go-time.js';

/** Nomad's ACLToken. Times are RFC 3339 strings, ExpirationTTL nanoseconds. */
export interface AclToken {
  AccessorID: string;
  SecretID: string;
  Name: string;
  Type: 'client' | 'management';
  Policies: string[] | null;
  Roles: AclTokenRoleLink[] | null;
  Global: boolean;
  Hash: string;
  CreateTime: string;
  ExpirationTime: string | null;
  ExpirationTTL: number;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A token's link to a role (by ID; Name filled in when answered). */
export interface AclTokenRoleLink {
  ID: string;
  Name: string;
}

/** Nomad's ACLTokenListStub: a token without its secret. */
export type AclTokenListStub = Omit<AclToken, 'SecretID' | 'ExpirationTTL'>;

/** Nomad's JobACL: attaches a policy to a job's tasks (empty Group or Task: all of them). */
export interface JobAcl {
  Namespace: string;
  JobID: string;
  Group: string;
  Task: string;
}

/** Nomad's ACLPolicy. */
export interface AclPolicy {
  Name: string;
  Description: string;
  Rules: string;
  /** The job (and optionally group and task) whose workload identities this policy also applies to. */
  JobACL: JobAcl | null;
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Nomad's ACLPolicyListStub. */
export type AclPolicyListStub = Omit<AclPolicy, 'Rules' | 'JobACL'>;

/** Nomad's ACLRole. */
export interface AclRole {
  ID: string;
  Name: string;
  Description: string;
  Policies: { Name: string }[];
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** The name of the policy that applies to requests without a token. */
export const ANONYMOUS_POLICY = 'anonymous';

/** Nomad's anonymous token: what a request without a token acts as. */
export const ANONYMOUS_TOKEN: AclToken = {
  AccessorID: 'anonymous',
  SecretID: 'anonymous',
  Name: 'Anonymous Token',
  Type: 'client',
  Policies: [ANONYMOUS_POLICY],
  Roles: null,
  Global: false,
  Hash: '',
  CreateTime: GO_ZERO_TIME,
  ExpirationTime: null,
  ExpirationTTL: 0,
  CreateIndex: 0,
  ModifyIndex: 0,
};

/** A token's list stub (no secret). */
export function aclTokenStub(t: AclToken): AclTokenListStub {
  const { SecretID: _s, ExpirationTTL: _t, ...stub } = t;
  return stub;
}

/** A policy's list stub. */
export function aclPolicyStub(p: AclPolicy): AclPolicyListStub {
  const { Rules: _r, JobACL: _j, ...stub } = p;
  return stub;
}

/** True when the token's ExpirationTime has passed at `nowMs`. */
export function aclTokenExpired(t: AclToken, nowMs: number): boolean {
  return t.ExpirationTime !== null && Date.parse(t.ExpirationTime) <= nowMs;
}
