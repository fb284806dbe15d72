/**
 * The server side of ACLs: bootstrap (once, with Nomad's reset-index file as the escape
 * hatch), tokens, policies and roles validated and written through the log, and the resolution
 * of a secret into its token and compiled permissions (the Acl the HTTP gate checks). Secrets
 * are made here, before the command is appended, so that replay reproduces them; none is ever
 * logged.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Acl, type ImplicitGrant } from '../../acl/acl.js';
import { parsePolicy, PolicyParseError, type PolicyRules } from '../../acl/policy-parser.js';
import {
  ANONYMOUS_POLICY,
  ANONYMOUS_TOKEN,
  aclTokenExpired,
  type AclPolicy,
  type AclRole,
  type AclToken,
  type AclTokenRoleLink,
  type JobAcl,
} from '../../structs/acl.js';
import { DurationParseError, parseDuration } from '../../structs/duration.js';
import { ServerError } from '../server-error.js';
import type { Command } from '../fsm/commands.js';
import type { StateStore } from '../state/state-store.js';
import type { AclTables } from '../state/acl-tables.js';
import type { EndpointContext } from './endpoint-context.js';
import { implicitlyAllowed, jobAclApplies } from '../../acl/workload-variables.js';
import { looksLikeJwt } from '../jwt/jwt-parts.js';
import type { ResolvedWorkload } from './workload-identity-endpoint.js';

/** Resolves a workload identity JWT into its workload (WorkloadIdentityEndpoint). */
export interface WorkloadTokenResolver {
  resolve(token: string): ResolvedWorkload;
}

/** A token resolved: the token itself and what it may do. */
export interface ResolvedToken {
  token: AclToken;
  acl: Acl;
}

/** What the endpoint needs of its server (an EndpointContext provides it). */
interface AclEndpointDeps {
  store: StateStore;
  apply(cmd: Command): Promise<number>;
  /** Wall-clock milliseconds (token times, expiry). */
  nowMs(): number;
  /** Where `acl-bootstrap-reset` is looked for (Nomad: the server's data dir). */
  dataDir: string;
}

/** A token as asked for by POST /v1/acl/token[/:accessor] (Nomad's ACLToken fields). */
export interface TokenRequest {
  AccessorID?: string;
  Name?: string;
  Type?: string;
  Policies?: string[] | null;
  Roles?: { ID?: string; Name?: string }[] | null;
  Global?: boolean;
  /** Nanoseconds, or a Go duration string as Nomad's Go client sends it ("1h0m0s"; "" for none). */
  ExpirationTTL?: number | string;
  ExpirationTime?: string | null;
}

/** A token request's ExpirationTTL in nanoseconds (0 for none), as Nomad's ACLToken.UnmarshalJSON reads it. */
function requestedTtl(v: unknown): number {
  if (v === undefined || v === null || v === '' || v === 0) return 0;
  const invalid = () => new ServerError('ACL_REQUEST_INVALID', { reason: `ExpirationTTL must be a positive duration (nanoseconds or a duration string like "1h"), got ${JSON.stringify(v)}` });
  let ns: number;
  if (typeof v === 'number') ns = v;
  else if (typeof v === 'string') {
    try {
      ns = parseDuration(v);
    } catch (e) {
      if (e instanceof DurationParseError) throw invalid();
      throw e;
    }
  } else throw invalid();
  if (!Number.isInteger(ns) || ns < 0) throw invalid();
  return ns;
}

/** A role as asked for by POST /v1/acl/role[/:id]. */
export interface RoleRequest {
  ID?: string;
  Name?: string;
  Description?: string;
  Policies?: { Name?: string }[] | null;
}

const POLICY_NAME = /^[a-zA-Z0-9-]{1,128}$/;
const ROLE_NAME = /^[a-zA-Z0-9-]{1,128}$/;
/** The file an operator writes the reset index into to bootstrap again (Nomad's name). */
export const BOOTSTRAP_RESET_FILE = 'acl-bootstrap-reset';

/** The ACL operations of a server. */
export class AclEndpoint {
  /** Parsed rules per policy, keyed by name and ModifyIndex (parsing is the slow part). */
  private readonly rulesCache = new Map<string, { modifyIndex: number; rules: PolicyRules | null }>();

  private readonly d: AclEndpointDeps;

  constructor(
    ctx: EndpointContext,
    /** Workload identities presented as tokens (absent: a JWT is an unknown token). */
    private readonly workloads?: WorkloadTokenResolver,
  ) {
    this.d = { store: ctx.store, apply: (cmd) => ctx.apply(cmd), nowMs: () => ctx.clock.now(), dataDir: ctx.config.dataDir };
  }

  /** The ACL tables, for reads (tokens, policies, roles). */
  get tables(): AclTables {
    return this.d.store.acl;
  }

  // ---- resolution ----

  /**
   * The token of `secret` and its permissions: "" is the anonymous token (the `anonymous`
   * policy's rules). Throws ACL_TOKEN_NOT_FOUND for an unknown secret, ACL_TOKEN_EXPIRED past
   * its expiry.
   */
  async resolve(secret: string): Promise<ResolvedToken> {
    if (secret === '' || secret === ANONYMOUS_TOKEN.SecretID) return { token: ANONYMOUS_TOKEN, acl: await this.compile([ANONYMOUS_POLICY]) };
    if (this.workloads && looksLikeJwt(secret)) return this.resolveWorkload(secret);
    const token = this.d.store.acl.tokenBySecret(secret);
    if (!token) throw new ServerError('ACL_TOKEN_NOT_FOUND', {});
    if (aclTokenExpired(token, this.d.nowMs())) throw new ServerError('ACL_TOKEN_EXPIRED', {});
    if (token.Type === 'management') return { token, acl: Acl.management };
    return { token, acl: await this.compile(this.policiesOf(token)) };
  }

  /**
   * A workload identity as a token (Nomad's ResolveClaims): the workload's implicit grant (its
   * own variables) plus the policies attached to its job, group or task. The token it answers
   * is made up for the request: it has no accessor in the ACL tables and expires with the JWT.
   * Throws WORKLOAD_IDENTITY_INVALID (403) when the JWT does not verify or its allocation stopped.
   */
  private async resolveWorkload(jwt: string): Promise<ResolvedToken> {
    const w = this.workloads!.resolve(jwt);
    const attached = this.d.store.acl.allPolicies().filter((p) => jobAclApplies(p.JobACL, w.claim)).map((p) => p.Name);
    const acl = await this.compile(attached, { variable: (ns, path, op) => implicitlyAllowed(w.claim, ns, path, op) });
    const token: AclToken = {
      AccessorID: '',
      SecretID: jwt,
      Name: `workload identity of task "${w.claim.task}" of allocation ${w.allocId}`,
      Type: 'client',
      Policies: attached,
      Roles: null,
      Global: false,
      Hash: '',
      CreateTime: new Date(0).toISOString(),
      ExpirationTime: w.expiresAtMs !== undefined ? new Date(w.expiresAtMs).toISOString() : null,
      ExpirationTTL: 0,
      CreateIndex: 0,
      ModifyIndex: 0,
    };
    return { token, acl };
  }

  /** Whether `secret` is still a token of this cluster, without I/O: a known secret, or a workload identity that verifies. */
  secretExists(secret: string): boolean {
    if (this.d.store.acl.tokenBySecret(secret) !== undefined) return true;
    if (!this.workloads || !looksLikeJwt(secret)) return false;
    try {
      this.workloads.resolve(secret);
      return true;
    } catch {
      return false;
    }
  }

  /** The policy names a token holds, directly and through its roles. */
  policiesOf(token: AclToken): string[] {
    const names = new Set(token.Policies ?? []);
    for (const link of token.Roles ?? []) for (const p of this.d.store.acl.role(link.ID)?.Policies ?? []) names.add(p.Name);
    return [...names];
  }

  private async compile(names: string[], implicit: ImplicitGrant | null = null): Promise<Acl> {
    const rules: PolicyRules[] = [];
    for (const n of names) {
      const parsed = await this.parsedRules(n);
      if (parsed?.rules) rules.push(parsed.rules);
    }
    return Acl.compile(rules, implicit);
  }

  /**
   * The parsed rules of the stored policy `name` at its ModifyIndex (cached per index), or
   * undefined when there is no such policy. A stored policy was valid when written; one that
   * no longer parses has `rules: null` and grants nothing.
   */
  async parsedRules(name: string): Promise<{ modifyIndex: number; rules: PolicyRules | null } | undefined> {
    const p = this.d.store.acl.policy(name);
    if (!p) return undefined;
    const cached = this.rulesCache.get(name);
    if (cached && cached.modifyIndex === p.ModifyIndex) return cached;
    const entry = { modifyIndex: p.ModifyIndex, rules: await parsePolicy(p.Rules).catch(() => null) };
    this.rulesCache.set(name, entry);
    return entry;
  }

  // ---- bootstrap ----

  /**
   * Creates the first management token (with `secret` as its SecretID when given). Once done,
   * refused unless the data dir's `acl-bootstrap-reset` file holds the index of that bootstrap.
   */
  async bootstrap(secret?: string): Promise<AclToken> {
    const done = this.d.store.acl.bootstrapIndex;
    if (done > 0) {
      const reset = await readFile(join(this.d.dataDir, BOOTSTRAP_RESET_FILE), 'utf8').catch(() => '');
      if (reset.trim() !== String(done)) throw new ServerError('ACL_BOOTSTRAP_DONE', { resetIndex: done });
    }
    if (secret !== undefined && secret !== '' && !isUuid(secret)) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'BootstrapSecret must be a UUID' });
    const token = this.newToken({ Name: 'Bootstrap Token', Type: 'management', Global: true }, secret || randomUUID());
    const index = await this.d.apply({ Type: 'AclBootstrap', Token: token, Now: this.d.nowMs() * 1e6 });
    return this.d.store.acl.tokenByAccessor(token.AccessorID) ?? { ...token, CreateIndex: index, ModifyIndex: index };
  }

  // ---- policies ----

  /** Creates or replaces a policy after parsing its rules (400 naming the rule or line). */
  async upsertPolicy(name: string, req: { Name?: unknown; Description?: unknown; Rules?: unknown; JobACL?: unknown }): Promise<number> {
    if (req.Name !== undefined && req.Name !== name) throw new ServerError('ACL_REQUEST_INVALID', { reason: `policy name in the path ("${name}") and the body (${JSON.stringify(req.Name)}) differ` });
    if (!POLICY_NAME.test(name)) throw new ServerError('ACL_REQUEST_INVALID', { reason: `invalid policy name "${name}": letters, digits and "-" only, at most 128` });
    if (typeof req.Rules !== 'string') throw new ServerError('ACL_POLICY_INVALID', { policy: name, reason: 'Rules must be a string' });
    if (req.Description !== undefined && typeof req.Description !== 'string') throw new ServerError('ACL_REQUEST_INVALID', { reason: 'Description must be a string' });
    try {
      await parsePolicy(req.Rules);
    } catch (err) {
      if (err instanceof PolicyParseError) throw new ServerError('ACL_POLICY_INVALID', { policy: name, reason: err.message }, { cause: err });
      throw err;
    }
    const description = (req.Description as string | undefined) ?? '';
    const jobAcl = admitJobAcl(req.JobACL);
    const policy: AclPolicy = { Name: name, Description: description, Rules: req.Rules, JobACL: jobAcl, Hash: hash([name, description, req.Rules, ...(jobAcl ? [JSON.stringify(jobAcl)] : [])]), CreateIndex: 0, ModifyIndex: 0 };
    return this.d.apply({ Type: 'AclPolicyUpsert', Policies: [policy] });
  }

  async deletePolicy(name: string): Promise<number> {
    if (!this.d.store.acl.policy(name)) throw new ServerError('ACL_OBJECT_NOT_FOUND', { what: 'policy' });
    return this.d.apply({ Type: 'AclPolicyDelete', Names: [name] });
  }

  // ---- tokens ----

  /** Creates a token (no AccessorID) or updates one; answers it with its secret. */
  async upsertToken(req: TokenRequest, accessor?: string): Promise<AclToken> {
    const prev = accessor ? this.d.store.acl.tokenByAccessor(accessor) : undefined;
    if (accessor && !prev) throw new ServerError('ACL_OBJECT_NOT_FOUND', { what: 'token' });
    if (req.AccessorID && accessor && req.AccessorID !== accessor) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'AccessorID in the path and the body differ' });
    const token = this.newToken(req, prev?.SecretID ?? randomUUID(), prev);
    await this.d.apply({ Type: 'AclTokenUpsert', Tokens: [token], Now: this.d.nowMs() * 1e6 });
    return this.d.store.acl.tokenByAccessor(token.AccessorID) ?? token;
  }

  async deleteToken(accessor: string): Promise<number> {
    if (!this.d.store.acl.tokenByAccessor(accessor)) throw new ServerError('ACL_OBJECT_NOT_FOUND', { what: 'token' });
    return this.d.apply({ Type: 'AclTokenDelete', AccessorIDs: [accessor] });
  }

  private newToken(req: TokenRequest, secret: string, prev?: AclToken): AclToken {
    const type = req.Type ?? prev?.Type ?? 'client';
    if (type !== 'client' && type !== 'management') throw new ServerError('ACL_REQUEST_INVALID', { reason: `Type: must be "client" or "management", got ${JSON.stringify(type)}` });
    const policies = req.Policies ?? (prev && req.Policies === undefined ? prev.Policies : null) ?? [];
    if (!Array.isArray(policies) || !policies.every((p) => typeof p === 'string')) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'Policies must be a list of policy names' });
    for (const p of policies) if (!this.d.store.acl.policy(p)) throw new ServerError('ACL_REQUEST_INVALID', { reason: `Policies: policy "${p}" does not exist` });
    const roles = req.Roles === undefined && prev ? (prev.Roles ?? []) : this.roleLinks(req.Roles ?? []);
    if (type === 'management' && (policies.length > 0 || roles.length > 0)) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'management tokens cannot be associated with policies or roles' });
    if (type === 'client' && policies.length === 0 && roles.length === 0) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'client tokens must be associated with at least one policy or role' });
    const nowMs = this.d.nowMs();
    let expiration = prev?.ExpirationTime ?? null;
    let ttl = prev?.ExpirationTTL ?? 0;
    if (!prev) {
      const requested = requestedTtl(req.ExpirationTTL);
      if (requested !== 0) {
        ttl = requested;
        expiration = new Date(nowMs + Math.floor(ttl / 1e6)).toISOString();
      } else if (typeof req.ExpirationTime === 'string' && req.ExpirationTime !== '' && !req.ExpirationTime.startsWith('0001-')) {
        const at = Date.parse(req.ExpirationTime);
        if (!Number.isFinite(at)) throw new ServerError('ACL_REQUEST_INVALID', { reason: `ExpirationTime: not a time: ${JSON.stringify(req.ExpirationTime)}` });
        if (at <= nowMs) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'ExpirationTime must be in the future' });
        expiration = new Date(at).toISOString();
      }
    }
    if (req.Name !== undefined && typeof req.Name !== 'string') throw new ServerError('ACL_REQUEST_INVALID', { reason: 'Name must be a string' });
    const name = req.Name ?? prev?.Name ?? '';
    const global = req.Global ?? prev?.Global ?? false;
    const accessor = prev?.AccessorID ?? randomUUID();
    return {
      AccessorID: accessor,
      SecretID: secret,
      Name: name,
      Type: type,
      Policies: type === 'management' ? null : policies,
      Roles: type === 'management' ? null : roles,
      Global: global === true,
      Hash: hash([name, type, policies.join(','), roles.map((r) => r.ID).join(','), String(global)]),
      CreateTime: prev?.CreateTime ?? new Date(nowMs).toISOString(),
      ExpirationTime: expiration,
      ExpirationTTL: ttl,
      CreateIndex: prev?.CreateIndex ?? 0,
      ModifyIndex: prev?.ModifyIndex ?? 0,
    };
  }

  /** Role links by ID or name, each naming an existing role. */
  private roleLinks(req: unknown): AclTokenRoleLink[] {
    if (!Array.isArray(req)) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'Roles must be a list of {ID} or {Name}' });
    return req.map((r: { ID?: unknown; Name?: unknown }, i) => {
      const role = typeof r?.ID === 'string' && r.ID !== '' ? this.d.store.acl.role(r.ID) : typeof r?.Name === 'string' ? this.d.store.acl.roleByName(r.Name) : undefined;
      if (!role) throw new ServerError('ACL_REQUEST_INVALID', { reason: `Roles[${i}]: no role with ID ${JSON.stringify(r?.ID ?? '')} or Name ${JSON.stringify(r?.Name ?? '')}` });
      return { ID: role.ID, Name: role.Name };
    });
  }

  // ---- roles ----

  async upsertRole(req: RoleRequest, id?: string): Promise<AclRole> {
    const prev = id ? this.d.store.acl.role(id) : undefined;
    if (id && !prev) throw new ServerError('ACL_OBJECT_NOT_FOUND', { what: 'role' });
    if (req.ID && id && req.ID !== id) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'ID in the path and the body differ' });
    const name = req.Name ?? prev?.Name ?? '';
    if (typeof name !== 'string' || !ROLE_NAME.test(name)) throw new ServerError('ACL_REQUEST_INVALID', { reason: `Name: invalid role name ${JSON.stringify(name)}: letters, digits and "-" only, at most 128` });
    const other = this.d.store.acl.roleByName(name);
    if (other && other.ID !== prev?.ID) throw new ServerError('ACL_REQUEST_INVALID', { reason: `Name: a role named "${name}" already exists` });
    const policies = req.Policies ?? prev?.Policies ?? [];
    if (!Array.isArray(policies) || policies.length === 0) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'Policies: a role must link at least one policy' });
    const links = policies.map((p, i) => {
      if (typeof p?.Name !== 'string' || !this.d.store.acl.policy(p.Name)) throw new ServerError('ACL_REQUEST_INVALID', { reason: `Policies[${i}]: policy ${JSON.stringify(p?.Name ?? '')} does not exist` });
      return { Name: p.Name };
    });
    if (req.Description !== undefined && typeof req.Description !== 'string') throw new ServerError('ACL_REQUEST_INVALID', { reason: 'Description must be a string' });
    const description = req.Description ?? prev?.Description ?? '';
    const role: AclRole = {
      ID: prev?.ID ?? randomUUID(),
      Name: name,
      Description: description,
      Policies: links,
      Hash: hash([name, description, links.map((l) => l.Name).join(',')]),
      CreateIndex: prev?.CreateIndex ?? 0,
      ModifyIndex: prev?.ModifyIndex ?? 0,
    };
    await this.d.apply({ Type: 'AclRoleUpsert', Roles: [role] });
    return this.d.store.acl.role(role.ID) ?? role;
  }

  async deleteRole(id: string): Promise<number> {
    if (!this.d.store.acl.role(id)) throw new ServerError('ACL_OBJECT_NOT_FOUND', { what: 'role' });
    return this.d.apply({ Type: 'AclRoleDelete', RoleIDs: [id] });
  }
}

function hash(parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('base64');
}

function isUuid(s: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
}

/** A policy's JobACL from its API JSON (null or absent: none), refused naming the field as Nomad's validation does. */
function admitJobAcl(raw: unknown): JobAcl | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ServerError('ACL_REQUEST_INVALID', { reason: 'JobACL must be an object' });
  const r = raw as Record<string, unknown>;
  const field = (k: string): string => {
    const v = r[k];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new ServerError('ACL_REQUEST_INVALID', { reason: `JobACL.${k} must be a string` });
    return v;
  };
  const out: JobAcl = { Namespace: field('Namespace') || 'default', JobID: field('JobID'), Group: field('Group'), Task: field('Task') };
  if (out.JobID === '') throw new ServerError('ACL_REQUEST_INVALID', { reason: 'JobACL.JobID must be set' });
  if (out.Task !== '' && out.Group === '') throw new ServerError('ACL_REQUEST_INVALID', { reason: 'JobACL.Group must be set when JobACL.Task is set' });
  return out;
}
