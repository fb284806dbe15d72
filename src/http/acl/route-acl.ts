/**
 * What a route needs of the caller's token, declared on the route itself:
 * `app.get(url, { config: acl.ns('read-job') }, handler)`. Every route declares one (a test,
 * test/http/route-acl.test.ts, fails on a route that declares nothing); the gate
 * (acl-gate.ts) is the one place that decides. The capabilities are Nomad's (acl/policy.go),
 * and each route asks for the one Nomad's endpoint checks.
 */
import type { FastifyRequest } from 'fastify';

/** Where a namespace-scoped route finds the namespace it acts in. */
export type NamespaceSource =
  /** `?namespace=` (default "default"; "*" means every namespace the token may see). */
  | 'query'
  /** The `:id` / `:alloc` allocation's namespace. */
  | 'alloc'
  /** The `:id` evaluation's namespace. */
  | 'eval'
  /** The `:id` deployment's namespace. */
  | 'deployment'
  /** The submitted Job's Namespace, else `?namespace=`. */
  | 'job-body';

/** A coarse rule of the policy language. */
export type CoarseRule = 'agent' | 'node' | 'operator' | 'quota' | 'plugin';

/** What a route needs. */
export type AclNeed =
  /** Nothing: answered to anyone (status, health, the UI's static files). */
  | { kind: 'public' }
  /** Any valid token, the anonymous one included (token/self). */
  | { kind: 'token' }
  /** A management token. */
  | { kind: 'management' }
  /** A namespace capability; lists with `*` keep what the token may see. */
  | { kind: 'namespace'; capability: string; from: NamespaceSource; alsoForRawExec?: string }
  /** A coarse rule at a level. */
  | { kind: 'rule'; rule: CoarseRule; level: 'list' | 'read' | 'write' }
  /** A client's internal call: the server checks the node's SecretID itself. */
  | { kind: 'node-secret' }
  /** The handler filters what it answers by the token itself (events, search, ACL lists). */
  | { kind: 'filtered' }
  /**
   * A variable operation (read, write, destroy) on the `*` path of /v1/var/*, in the namespace
   * variableTarget() finds, by the policy's `variables { path … }` rules.
   */
  | { kind: 'variable'; op: 'read' | 'write' | 'destroy' }
  /** Any one of these. */
  | { kind: 'any'; of: AclNeed[] }
  /** The node's own SecretID for `:id`, or the alternative need. */
  | { kind: 'own-node-or'; else: AclNeed }
  /** Decided per request (a route whose path or method selects the operation). */
  | { kind: 'dynamic'; resolve: (req: FastifyRequest) => AclNeed };

/** The route option that carries the declaration. */
export interface AclRouteConfig {
  acl: AclNeed;
}

const cfg = (acl: AclNeed): { config: AclRouteConfig } => ({ config: { acl } });

/** Declaration helpers, e.g. `app.get(url, acl.ns('read-job'), handler)`. */
export const acl = {
  public: () => cfg({ kind: 'public' }),
  token: () => cfg({ kind: 'token' }),
  management: () => cfg({ kind: 'management' }),
  ns: (capability: string, from: NamespaceSource = 'query') => cfg({ kind: 'namespace', capability, from }),
  rule: (rule: CoarseRule, level: 'list' | 'read' | 'write') => cfg({ kind: 'rule', rule, level }),
  nodeSecret: () => cfg({ kind: 'node-secret' }),
  filtered: () => cfg({ kind: 'filtered' }),
  variable: (op: 'read' | 'write' | 'destroy') => cfg({ kind: 'variable', op }),
  need: (need: AclNeed) => cfg(need),
  dynamic: (resolve: (req: FastifyRequest) => AclNeed) => cfg({ kind: 'dynamic', resolve }),
};

/** Need constructors for dynamic declarations. */
export const need = {
  ns: (capability: string, from: NamespaceSource = 'query'): AclNeed => ({ kind: 'namespace', capability, from }),
  rule: (rule: CoarseRule, level: 'list' | 'read' | 'write'): AclNeed => ({ kind: 'rule', rule, level }),
  management: (): AclNeed => ({ kind: 'management' }),
  token: (): AclNeed => ({ kind: 'token' }),
  filtered: (): AclNeed => ({ kind: 'filtered' }),
  public: (): AclNeed => ({ kind: 'public' }),
};

/** The declaration of a route's options, or undefined when it declares nothing. */
export function declaredNeed(config: unknown): AclNeed | undefined {
  const c = config as Partial<AclRouteConfig> | undefined;
  return c && typeof c === 'object' && c.acl && typeof c.acl === 'object' ? c.acl : undefined;
}

/**
 * The namespace and path a /v1/var/* request acts on — the one answer the gate checks and the
 * handler acts on, so that no spelling of a request is checked as one variable and served as
 * another. The path is the `*` tail without leading or trailing slashes (Nomad's client trims
 * them; `%2f` arrives decoded). A write acts in the written variable's own Namespace when it
 * names one, else `?namespace=`; a read or delete has no variable in its body and acts in
 * `?namespace=` only, whatever body it carries. Either defaults to "default".
 */
export function variableTarget(op: 'read' | 'write' | 'destroy', query: Record<string, unknown>, params: Record<string, string | undefined>, body: unknown): { namespace: string; path: string } {
  return { namespace: variableNamespace(query, op === 'write' ? body : undefined), path: (params['*'] ?? '').replace(/^\/+|\/+$/g, '') };
}

/** The namespace of a variable request: `body`'s Namespace when it names one, else `?namespace=`, else "default". */
function variableNamespace(query: Record<string, unknown>, body: unknown): string {
  const fromBody = (body as { Namespace?: unknown } | null | undefined)?.Namespace;
  if (typeof fromBody === 'string' && fromBody !== '') return fromBody;
  const q = query['namespace'];
  const fromQuery = Array.isArray(q) ? q[0] : q;
  return typeof fromQuery === 'string' && fromQuery !== '' ? fromQuery : 'default';
}
