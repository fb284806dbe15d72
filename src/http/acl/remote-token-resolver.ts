/**
 * How a client-only agent resolves a token: it asks its servers, as Nomad's clients do
 * (ACL.ResolveToken), and caches the answer for the agent's `token_ttl`. The token comes from
 * `GET /v1/acl/token/self`, its roles and policies from `/v1/acl/role/:id` and
 * `/v1/acl/policy/:name` — each readable by the token that holds them — and the rules are
 * compiled here. A server's refusal (unknown or expired token) is the caller's refusal.
 */
import { Acl } from '../../acl/acl.js';
import { parsePolicy, type PolicyRules } from '../../acl/policy-parser.js';
import type { AclPolicy, AclRole, AclToken } from '../../structs/acl.js';
import { ERROR_CODE_HEADER, isErrorCode } from '../../structs/error-catalogue.js';
import { HttpError } from '../http-errors.js';
import type { TokenResolver } from './acl-gate.js';

/** Resolves tokens through the servers' HTTP API. */
export class RemoteTokenResolver implements TokenResolver {
  private readonly cache = new Map<string, { until: number; value: Promise<{ token: AclToken; acl: Acl }> }>();

  constructor(
    private readonly servers: string[],
    private readonly ttlMs: number,
    /** How servers are called (mutual TLS with the agent's `tls` block: tls-fetch.ts). */
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  resolve(secret: string): Promise<{ token: AclToken; acl: Acl }> {
    const now = Date.now();
    const hit = this.cache.get(secret);
    if (hit && hit.until > now) return hit.value;
    const value = this.fetchResolved(secret);
    this.cache.set(secret, { until: now + this.ttlMs, value });
    // A failure is not cached: the next request asks again.
    value.catch(() => this.cache.delete(secret));
    if (this.cache.size > 1024) for (const [k, v] of this.cache) if (v.until <= now) this.cache.delete(k);
    return value;
  }

  /**
   * Resolves `secret` afresh, bypassing the cache, and caches the answer: what live connections
   * are re-checked with (live-authorizations.ts). A token the servers no longer know leaves the
   * cache at once, so new requests with it are refused too.
   */
  async refresh(secret: string): Promise<{ token: AclToken; acl: Acl }> {
    try {
      const value = await this.fetchResolved(secret);
      this.cache.set(secret, { until: Date.now() + this.ttlMs, value: Promise.resolve(value) });
      return value;
    } catch (err) {
      if ((err as HttpError).status === 403) this.cache.delete(secret);
      throw err;
    }
  }

  private async fetchResolved(secret: string): Promise<{ token: AclToken; acl: Acl }> {
    const token = await this.get<AclToken>('/v1/acl/token/self', secret);
    if (token.Type === 'management') return { token, acl: Acl.management };
    const names = new Set(token.Policies ?? []);
    for (const link of token.Roles ?? []) {
      const role = await this.get<AclRole>(`/v1/acl/role/${encodeURIComponent(link.ID)}`, secret).catch(() => null);
      for (const p of role?.Policies ?? []) names.add(p.Name);
    }
    const rules: PolicyRules[] = [];
    for (const n of names) {
      const policy = await this.get<AclPolicy>(`/v1/acl/policy/${encodeURIComponent(n)}`, secret).catch(() => null);
      if (!policy) continue;
      const parsed = await parsePolicy(policy.Rules).catch(() => null);
      if (parsed) rules.push(parsed);
    }
    return { token, acl: Acl.compile(rules) };
  }

  private async get<T>(path: string, secret: string): Promise<T> {
    let lastErr: unknown;
    for (const s of this.servers) {
      const base = /^https?:\/\//.test(s) ? s.replace(/\/+$/, '') : `http://${s}`;
      let res: Response;
      try {
        res = await this.fetchFn(base + path, { headers: secret ? { 'X-Nomad-Token': secret } : {} });
      } catch (err) {
        lastErr = err;
        continue;
      }
      const text = await res.text();
      if (res.ok) return JSON.parse(text) as T;
      const code = res.headers.get(ERROR_CODE_HEADER);
      if (res.status < 500) throw isErrorCode(code) && code.startsWith('ACL_') ? new HttpError(code as 'ACL_PERMISSION_DENIED', {}) : new HttpError('ACL_PERMISSION_DENIED', {});
      lastErr = new Error(`${res.status} ${text}`);
    }
    throw new HttpError('HTTP_INTERNAL', { reason: `resolving the ACL token: no server answered: ${String((lastErr as Error | undefined)?.message ?? lastErr)}` });
  }
}
