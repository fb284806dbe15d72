/**
 * Client introduction, as Nomad 2.0's: an operator mints a short-lived introduction token
 * (`node intro create`, PUT /v1/acl/identity/client-introduction-token), optionally bound to a
 * node name and a node pool; a new client presents it when it first registers; the server's
 * `client_introduction { enforcement }` decides what a registration without a valid one gets.
 * A node already registered authenticates with its SecretID instead, whatever the enforcement.
 */

/** How a server treats a new node's registration without a valid introduction token (Nomad's levels). */
export const IntroductionEnforcement = {
  /** No check: any registration is admitted, as before client introduction existed. */
  None: 'none',
  /** A registration without a token is admitted with a warning; a token presented must be valid. */
  Warn: 'warn',
  /** A registration without a valid token is refused. */
  Strict: 'strict',
} as const;
export type IntroductionEnforcement = (typeof IntroductionEnforcement)[keyof typeof IntroductionEnforcement];

/** True for the three enforcement levels. */
export function isIntroductionEnforcement(v: unknown): v is IntroductionEnforcement {
  return v === 'none' || v === 'warn' || v === 'strict';
}

/** The server's `client_introduction` block (Nomad's names; TTLs in ms). */
export interface ClientIntroductionConfig {
  enforcement: IntroductionEnforcement;
  /** `default_identity_ttl`: the TTL of a token minted without one. */
  defaultIdentityTtlMs: number;
  /** `max_identity_ttl`: a longer TTL asked for is cut to this. */
  maxIdentityTtlMs: number;
}

/** Nomad's defaults: enforcement "warn", tokens of 5 minutes, at most 30. */
export function defaultClientIntroductionConfig(): ClientIntroductionConfig {
  return { enforcement: IntroductionEnforcement.Warn, defaultIdentityTtlMs: 5 * 60_000, maxIdentityTtlMs: 30 * 60_000 };
}

/**
 * The problem of a `client_introduction` block as `[field, reason]` (Nomad's
 * NodeIntroductionConfig.Validate), or undefined when it is valid.
 */
export function clientIntroductionConfigProblem(c: ClientIntroductionConfig): [string, string] | undefined {
  if (!isIntroductionEnforcement(c.enforcement)) return ['enforcement', `invalid enforcement ${JSON.stringify(c.enforcement)} (want "none", "warn" or "strict")`];
  if (!(c.defaultIdentityTtlMs > 0)) return ['default_identity_ttl', 'must be greater than 0'];
  if (!(c.maxIdentityTtlMs > 0)) return ['max_identity_ttl', 'must be greater than 0'];
  if (c.maxIdentityTtlMs < c.defaultIdentityTtlMs) return ['max_identity_ttl', 'must be greater than or equal to default_identity_ttl'];
  return undefined;
}

/** The audience of Nomad's identities, which introduction tokens carry too. */
export const INTRODUCTION_AUDIENCE = 'nomadproject.io';

/** The claims of an introduction token (the JWT's payload), with Nomad's names. */
export interface IntroductionClaims {
  aud: string;
  /** Expiry, Unix seconds. */
  exp: number;
  /** Issued at, Unix seconds. */
  iat: number;
  /** Not before, Unix seconds. */
  nbf: number;
  /** A unique ID of this token. */
  jti: string;
  /** `node-introduction:<region>:<pool>:<name>:default`, as Nomad's subject. */
  sub: string;
  /** The node pool a node presenting it must be in. */
  nomad_node_pool: string;
  /** The name a node presenting it must have; "" binds no name. */
  nomad_node_name: string;
}

/** The body of PUT /v1/acl/identity/client-introduction-token (Nomad's ACLIdentityClientIntroductionTokenRequest). */
export interface ClientIntroductionTokenRequest {
  /** The token's name binding; "" for none. */
  NodeName: string;
  /** The token's pool binding; "default" when not given. */
  NodePool: string;
  /** The TTL in ms; 0 for the server's default_identity_ttl. */
  TtlMs: number;
}

/** The answer of that endpoint (Nomad's ACLIdentityClientIntroductionTokenResponse). */
export interface ClientIntroductionTokenResponse {
  JWT: string;
}

/**
 * The key servers sign and check introduction tokens with: made by the leader on the first
 * token, kept in the replicated state (the ACL tables) so that every server checks what any
 * server minted. Secret: never answered, logged or put in an event.
 */
export interface IntroductionSigningKey {
  /** The JWT header's `kid`. */
  KeyID: string;
  /** 32 random bytes, base64. */
  Key: string;
  CreateIndex: number;
}
