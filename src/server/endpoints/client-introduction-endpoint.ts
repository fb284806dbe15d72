/**
 * Client introduction on the server: minting introduction tokens (Nomad's
 * ACL.CreateClientIntroductionToken, behind PUT /v1/acl/identity/client-introduction-token) and
 * admitting a new node's registration under the `client_introduction` enforcement. The signing
 * key is made on the leader for the first token and kept in the replicated state, so that any
 * server — the next leader too — checks what another minted. Tokens are never logged.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  defaultClientIntroductionConfig,
  type ClientIntroductionConfig,
  type ClientIntroductionTokenRequest,
  type ClientIntroductionTokenResponse,
  type IntroductionSigningKey,
} from '../../structs/client-introduction.js';
import { NANOS_PER_MS, parseDuration } from '../../structs/duration.js';
import type { Node } from '../../structs/index.js';
import { IntroductionTokenError, mintIntroductionToken, verifyIntroductionToken } from '../introduction/introduction-token.js';
import { introductionVerdict, type PresentedIntroduction } from '../introduction/introduction-verdict.js';
import { IntroductionLog } from '../introduction/introduction-log.js';
import { ServerError } from '../server-error.js';
import type { EndpointContext } from './endpoint-context.js';

/** The pool a token is bound to when the request names none (Nomad's). */
const DEFAULT_POOL = 'default';

/** Reads Nomad's request body: NodeName, NodePool, TTL (nanoseconds, or a Go duration string). */
export function parseIntroductionRequest(raw: unknown): ClientIntroductionTokenRequest {
  const bad = (reason: string) => new ServerError('INTRODUCTION_REQUEST_INVALID', { reason });
  const body = raw === undefined || raw === null ? {} : raw;
  if (typeof body !== 'object' || Array.isArray(body)) throw bad('request body must be a JSON object');
  const o = body as Record<string, unknown>;
  const str = (k: string): string => {
    const v = o[k];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw bad(`${k} must be a string, got ${JSON.stringify(v)}`);
    return v;
  };
  const ttl = o['TTL'];
  let ttlNs = 0;
  if (typeof ttl === 'number') ttlNs = ttl;
  else if (typeof ttl === 'string' && ttl !== '') {
    try {
      ttlNs = parseDuration(ttl);
    } catch {
      throw bad(`TTL must be a duration such as "15m", got ${JSON.stringify(ttl)}`);
    }
  } else if (ttl !== undefined && ttl !== null && ttl !== '') throw bad(`TTL must be a duration, got ${JSON.stringify(ttl)}`);
  if (!Number.isFinite(ttlNs) || ttlNs < 0) throw bad(`TTL must not be negative, got ${JSON.stringify(ttl)}`);
  return { NodeName: str('NodeName'), NodePool: str('NodePool') || DEFAULT_POOL, TtlMs: ttlNs / NANOS_PER_MS };
}

/** Minting and checking introduction tokens. */
export class ClientIntroductionEndpoint {
  /** Violations, counted and logged without flooding (introduction-log.ts). */
  private readonly log: IntroductionLog;

  constructor(private readonly ctx: EndpointContext) {
    this.log = new IntroductionLog(() => ctx.config.logger, ctx.clock);
  }

  /** The server's `client_introduction` block. */
  get config(): ClientIntroductionConfig {
    return this.ctx.config.clientIntroduction ?? defaultClientIntroductionConfig();
  }

  /**
   * Mints a token for the request's binding. A TTL of 0 takes default_identity_ttl; one above
   * max_identity_ttl is cut to it (logged, as Nomad's). The first token makes the signing key
   * (a log write); NOT_LEADER on a follower until then.
   */
  async createToken(raw: unknown): Promise<ClientIntroductionTokenResponse> {
    const req = parseIntroductionRequest(raw);
    const cfg = this.config;
    let ttlMs = req.TtlMs === 0 ? cfg.defaultIdentityTtlMs : req.TtlMs;
    if (ttlMs > cfg.maxIdentityTtlMs) {
      this.ctx.config.logger?.warn({ requested_ttl_ms: ttlMs, max_identity_ttl_ms: cfg.maxIdentityTtlMs }, 'client introduction token TTL above max_identity_ttl; using the maximum');
      ttlMs = cfg.maxIdentityTtlMs;
    }
    const key = await this.signingKey();
    const jwt = mintIntroductionToken(key, {
      region: this.ctx.config.region ?? 'global',
      nodeName: req.NodeName,
      nodePool: req.NodePool,
      ttlMs,
      nowMs: this.ctx.clock.now(),
      tokenId: randomUUID(),
    });
    return { JWT: jwt };
  }

  /**
   * Admits or refuses the first registration of `node` with what its client presented
   * (`introToken` undefined or "": none), logging as Nomad's servers do (but at most a burst of
   * lines of each kind a minute, then their count: IntroductionLog); throws
   * NODE_INTRODUCTION_REFUSED (403) naming the reason, never the token.
   */
  admitNewNode(node: Node, introToken: string | undefined): void {
    const enforcement = this.config.enforcement;
    if (enforcement === 'none') return;
    const verdict = introductionVerdict(enforcement, this.presented(introToken), { ID: node.ID, Name: node.Name, NodePool: node.NodePool });
    if (verdict.log) this.log.record(verdict.log);
    if (!verdict.allowed) throw new ServerError('NODE_INTRODUCTION_REFUSED', { reason: verdict.reason ?? 'no valid introduction token' });
  }

  /** Registrations without a valid introduction token since the server started (Nomad's nomad.client.introduction_violation_num). */
  violations(): number {
    return this.log.violations();
  }

  /** The server is closing: what the log left out is logged now. */
  close(): void {
    this.log.close();
  }

  private presented(token: string | undefined): PresentedIntroduction {
    if (token === undefined || token === '') return { kind: 'none' };
    try {
      return { kind: 'valid', claims: verifyIntroductionToken(this.ctx.store.acl.introductionKey, token, this.ctx.clock.now()) };
    } catch (err) {
      if (err instanceof IntroductionTokenError) return { kind: 'invalid', problem: err.problem };
      throw err;
    }
  }

  /** The cluster's signing key, made (through the log) on first use. */
  private async signingKey(): Promise<IntroductionSigningKey> {
    const have = this.ctx.store.acl.introductionKey;
    if (have) return have;
    await this.ctx.apply({ Type: 'AclIntroductionKeySet', Key: { KeyID: randomUUID(), Key: randomBytes(32).toString('base64'), CreateIndex: 0 } });
    // The first key applied wins (a racing mint's may be the one kept).
    const key = this.ctx.store.acl.introductionKey;
    if (!key) throw new ServerError('APPLY_FAILED', { index: this.ctx.store.latestIndex(), reason: 'the client introduction key was not kept' });
    return key;
  }
}
