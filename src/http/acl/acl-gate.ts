/**
 * The one place that decides whether a request may proceed: it resolves the caller's token
 * (X-Nomad-Token or Authorization: Bearer; none is the anonymous token) and checks it against
 * what the route declared (route-acl.ts). Fastify routes pass through it in a preHandler hook;
 * the exec websocket, which is upgraded outside fastify, calls `authorize` itself. With ACLs
 * off it lets everything through and records nothing.
 *
 * For handlers that filter (lists with `?namespace=*`, the event stream, search), the token's
 * permissions stay attached to the request: `requestAcl(req)` gives them, and
 * `namespaceFilter(req, capability)` answers which namespaces the token may see — the API the
 * namespace routes call to narrow `*` to what a token may read.
 *
 * A long-lived connection (exec, event stream, log follow, monitor, blocking query) is held
 * with `hold`/`holdRequest` in the agent's LiveAuthorizations until it ends: it is ended when its
 * token is deleted, expires, or no longer passes the check that admitted it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Acl } from '../../acl/acl.js';
import type { CaravanError } from '../../structs/caravan-error.js';
import type { AclToken } from '../../structs/acl.js';
import { HttpError } from '../http-errors.js';
import { queryParam, tokenFromHeaders, type RawHeaders, type RawQuery } from '../query-options.js';
import { variableTarget, type AclNeed } from './route-acl.js';
import { UNHELD, type LiveAuthorizations, type LiveGrant } from './live-authorizations.js';

/** A resolved token: what it is and what it may do. */
export interface RequestAcl {
  token: AclToken;
  acl: Acl;
  /** The secret the request presented ("" for none: the anonymous token). */
  secret?: string;
  /** Whether other permissions of the same token still pass the check that admitted the request. */
  stillAllows?: (acl: Acl) => boolean;
  /** The capability a namespace-scoped list keeps its items by (set for `?namespace=*` lists and every list). */
  listCapability?: string;
}

/** Turns a secret into its token and permissions (the server's AclEndpoint, or a client's remote resolver). */
export interface TokenResolver {
  resolve(secret: string): Promise<{ token: AclToken; acl: Acl }>;
}

/** What the gate looks up to find the namespace an object-scoped route acts in. */
export interface AclLookups {
  allocNamespace(id: string): string | undefined;
  evalNamespace(id: string): string | undefined;
  deploymentNamespace(id: string): string | undefined;
  /** The SecretID of node `id` (servers only). */
  nodeSecret(id: string): string | undefined;
}

/** One request as the gate sees it. */
export interface GateRequest {
  headers: RawHeaders;
  query: RawQuery;
  params: Record<string, string | undefined>;
  body: unknown;
}

const attached = new WeakMap<object, RequestAcl>();

/** The token and permissions of a request the gate let through (undefined with ACLs off). */
export function requestAcl(req: FastifyRequest): RequestAcl | undefined {
  return attached.get(req.raw);
}

/**
 * Which namespaces the request's token may see with `capability` (any capability when
 * undefined): a predicate, true for every namespace when ACLs are off or the token is a
 * management token. Use it to narrow `?namespace=*` answers.
 */
export function namespaceFilter(req: FastifyRequest, capability?: string): (namespace: string) => boolean {
  const r = requestAcl(req);
  if (!r || r.acl.isManagement) return () => true;
  return (ns) => (capability === undefined ? r.acl.allowNamespace(ns) : r.acl.allowNamespaceOperation(ns, capability));
}

/** Refuses with Nomad's 403 "Permission denied". */
export function permissionDenied(): HttpError<'ACL_PERMISSION_DENIED'> {
  return new HttpError('ACL_PERMISSION_DENIED', {});
}

/** The ACL gate of one agent. */
export class AclGate {
  constructor(
    readonly enabled: boolean,
    private readonly resolver: () => TokenResolver | undefined,
    private readonly lookups: AclLookups | undefined,
    /** Where long-lived connections are held (undefined with ACLs off). */
    readonly live?: LiveAuthorizations,
  ) {}

  /**
   * Holds a connection admitted as `r` (authorize's answer) until released: `revoke` ends it when
   * its token is deleted, expires, or no longer passes the admitting check (nor `alsoAllows`,
   * which a stream that filters by the token passes to re-check and take the new permissions).
   * A connection admitted without a token (ACLs off, public routes) is not held. Throws a 403
   * when the token is already gone or expired (deleted since the gate checked it).
   */
  hold(r: RequestAcl | undefined, revoke: (reason: CaravanError) => void, alsoAllows?: (acl: Acl) => boolean): LiveGrant {
    if (!r || !this.live || r.secret === undefined) return UNHELD;
    const admitted = r.stillAllows;
    const stillAllows = admitted || alsoAllows ? (acl: Acl) => (admitted ? admitted(acl) : true) && (alsoAllows ? alsoAllows(acl) : true) : undefined;
    return this.live.hold({ secret: r.secret, token: r.token, revoke, ...(stillAllows ? { stillAllows } : {}) });
  }

  /** `hold` for a fastify request the gate let through, released when its answer ends. */
  holdRequest(req: FastifyRequest, reply: FastifyReply, revoke: (reason: CaravanError) => void, alsoAllows?: (acl: Acl) => boolean): LiveGrant {
    const grant = this.hold(requestAcl(req), revoke, alsoAllows);
    if (grant !== UNHELD) reply.raw.once('close', () => grant.release());
    return grant;
  }

  /** Checks a fastify request and attaches its token (the preHandler hook). */
  async check(req: FastifyRequest, need: AclNeed | undefined): Promise<void> {
    if (!this.enabled) return;
    const r = await this.authorize(
      { headers: req.headers as RawHeaders, query: (req.query ?? {}) as RawQuery, params: (req.params ?? {}) as Record<string, string>, body: req.body },
      need ?? (req.routeOptions.url === undefined ? { kind: 'public' } : undefined),
      req,
    );
    if (r) attached.set(req.raw, r);
  }

  /**
   * Decides one request; throws 403 when refused. Answers the resolved token (undefined for
   * public routes, node-secret calls and with ACLs off). A route that declared nothing is
   * refused: the gate fails closed.
   */
  async authorize(req: GateRequest, need: AclNeed | undefined, fastifyReq?: FastifyRequest): Promise<RequestAcl | undefined> {
    if (!this.enabled) return undefined;
    if (!need) throw permissionDenied();
    if (need.kind === 'dynamic') {
      if (!fastifyReq) throw permissionDenied();
      return this.authorize(req, need.resolve(fastifyReq), fastifyReq);
    }
    if (need.kind === 'public' || need.kind === 'node-secret') return undefined;
    const secret = tokenFromHeaders(req.headers);
    if (need.kind === 'own-node-or') {
      const id = req.params['id'];
      const own = id !== undefined && secret !== '' ? this.lookups?.nodeSecret(id) : undefined;
      if (own !== undefined && own !== '' && own === secret) return undefined;
      return this.authorize(req, need.else, fastifyReq);
    }
    const resolver = this.resolver();
    if (!resolver) throw permissionDenied();
    // A copy: resolvers may hand the same cached answer to many requests.
    const resolved: RequestAcl = { ...(await resolver.resolve(secret)), secret };
    if (!this.allows(resolved, need, req)) throw permissionDenied();
    resolved.stillAllows = (acl) => this.allows({ ...resolved, acl }, need, req);
    return resolved;
  }

  private allows(r: RequestAcl, need: AclNeed, req: GateRequest): boolean {
    const { acl } = r;
    switch (need.kind) {
      case 'public':
      case 'node-secret':
      case 'token':
      case 'filtered':
        return true;
      case 'management':
        return acl.isManagement;
      case 'rule':
        return acl.allow(need.rule, need.level);
      case 'any':
        return need.of.some((n) => this.allows(r, n, req));
      case 'own-node-or':
        return this.allows(r, need.else, req);
      case 'dynamic':
        return false;
      case 'variable': {
        const { namespace, path } = variableTarget(need.op, req.query, req.params, req.body);
        return acl.allowVariableOperation(namespace, path, need.op);
      }
      case 'namespace': {
        const ns = this.namespaceOf(need.from, req);
        // Lists keep only what the token may see; `*` passes if some namespace grants the capability.
        if (need.from === 'query') r.listCapability = need.capability;
        if (ns === undefined || ns === '*') return acl.allowsAnywhere(need.capability);
        return acl.allowNamespaceOperation(ns, need.capability);
      }
      default: {
        const never: never = need;
        return Boolean(never);
      }
    }
  }

  /** The namespace a request acts in; undefined when its object is unknown (the handler 404s). */
  private namespaceOf(from: string, req: GateRequest): string | undefined {
    const q = queryParam(req.query, 'namespace') || 'default';
    const id = req.params['id'] ?? req.params['alloc'] ?? '';
    switch (from) {
      case 'alloc':
        return this.lookups?.allocNamespace(id);
      case 'eval':
        return this.lookups?.evalNamespace(id);
      case 'deployment':
        return this.lookups?.deploymentNamespace(id);
      case 'job-body': {
        const job = (req.body as { Job?: { Namespace?: unknown } } | null)?.Job;
        return typeof job?.Namespace === 'string' && job.Namespace !== '' ? job.Namespace : q;
      }
      default:
        return q;
    }
  }
}
