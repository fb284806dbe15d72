/**
 * Who the UI is signed in as: the token behind the stored secret (`/v1/acl/token/self`) and the
 * rules of its policies, directly and through its roles (`/v1/acl/policy/:name`'s RulesJSON),
 * so that pages can hide or disable what the token may not do — as Nomad's web UI does, the
 * server still decides every request. Read once at start and again whenever the token changes.
 */
import { useEffect, useState } from 'preact/hooks';
import type { AclToken } from '../../../src/structs/acl.js';
import type { PolicyRulesJson } from '../../../src/acl/policy-rules-json.js';
import { ApiError, getToken } from './api.js';
import type { Acl } from '../../../src/acl/acl.js';
import { compileAcl } from './capabilities.js';

/** A policy the token holds, with its text and parsed rules (null when it cannot be read). */
export interface HeldPolicy {
  Name: string;
  Description: string;
  Rules: string;
  RulesJSON: PolicyRulesJson | null;
}

export type Session =
  /** token/self has not answered yet. */
  | { state: 'loading' }
  /** The agent runs without ACLs: everything is allowed. */
  | { state: 'acl-disabled' }
  /** A token (the anonymous one when no secret is stored) and its policies. */
  | { state: 'signed-in'; anonymous: boolean; token: AclToken; policies: HeldPolicy[]; acl: Acl }
  /** The stored secret was refused (unknown, expired) or the agent could not be asked. */
  | { state: 'error'; error: Error };

/** Nomad's token/self answer with ACLs off. */
const ACLS_DISABLED_ACCESSOR = 'acls-disabled';

let current: Session = { state: 'loading' };
let loadedFor: string | undefined;
const listeners = new Set<(s: Session) => void>();

function set(s: Session): void {
  current = s;
  for (const fn of listeners) fn(s);
}

/** Reads the token behind `secret` ('' = none) and its policies; throws ApiError as answered. */
export async function readSession(secret: string): Promise<Session> {
  const headers: Record<string, string> = secret ? { 'X-Nomad-Token': secret } : {};
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(path, { headers });
    if (!res.ok) throw new ApiError(res.status, path, (await res.text().catch(() => '')).trim() || `${res.status} ${res.statusText}`);
    return (await res.json()) as T;
  };
  const token = await get<AclToken>('/v1/acl/token/self');
  if (token.AccessorID === ACLS_DISABLED_ACCESSOR) return { state: 'acl-disabled' };
  const names = new Set(token.Policies ?? []);
  for (const role of token.Roles ?? []) {
    const r = await get<{ Policies: { Name: string }[] | null }>(`/v1/acl/role/${encodeURIComponent(role.ID)}`).catch(() => undefined);
    for (const p of r?.Policies ?? []) names.add(p.Name);
  }
  const policies: HeldPolicy[] = [];
  if (token.Type !== 'management') {
    for (const name of names) {
      // A policy named by the token but since deleted grants nothing: leave it out.
      const p = await get<HeldPolicy>(`/v1/acl/policy/${encodeURIComponent(name)}`).catch(() => undefined);
      if (p) policies.push({ Name: p.Name, Description: p.Description, Rules: p.Rules, RulesJSON: p.RulesJSON ?? null });
    }
  }
  return { state: 'signed-in', anonymous: secret === '', token, policies, acl: compileAcl(policies.map((p) => p.RulesJSON)) };
}

/** Reads the session for the stored token, unless it is already read (or being read) for it. */
export function loadSession(force = false): void {
  const secret = getToken();
  if (!force && loadedFor === secret) return;
  loadedFor = secret;
  set({ state: 'loading' });
  readSession(secret).then(
    (s) => {
      if (loadedFor === secret) set(s);
    },
    (err: unknown) => {
      if (loadedFor === secret) set({ state: 'error', error: err as Error });
    },
  );
}

/** The current session, re-rendering when it changes. */
export function useSession(): Session {
  const [s, setS] = useState<Session>(current);
  useEffect(() => {
    listeners.add(setS);
    // A session read that finished between the render and this subscription is not missed.
    setS(current);
    loadSession();
    return () => {
      listeners.delete(setS);
    };
  }, []);
  return s;
}

/** May the session use `capability` in namespace `ns`? Unknown (loading, error) is no. */
export function sessionAllows(s: Session, ns: string, capability: string): boolean {
  if (s.state === 'acl-disabled') return true;
  if (s.state !== 'signed-in') return false;
  if (s.token.Type === 'management') return true;
  return s.acl.allowNamespaceOperation(ns, capability);
}

/** May the session use the coarse `node` rule at `level` (drain, eligibility)? */
export function sessionAllowsNode(s: Session, level: 'read' | 'write'): boolean {
  if (s.state === 'acl-disabled') return true;
  if (s.state !== 'signed-in') return false;
  if (s.token.Type === 'management') return true;
  return s.acl.allow('node', level);
}

/** `can(capability, ns)` for the current session, for pages that gate actions. */
export function useCan(): (capability: string, ns: string) => boolean {
  const s = useSession();
  return (capability, ns) => sessionAllows(s, ns, capability);
}

/**
 * For gating actions: `denied(ns, cap, …alternatives)` is the capability the session lacks
 * (the first named) when it has none of them, else undefined.
 */
export function useDenied(): (ns: string, capability: string, ...alternatives: string[]) => string | undefined {
  const s = useSession();
  return (ns, capability, ...alternatives) => ([capability, ...alternatives].some((c) => sessionAllows(s, ns, c)) ? undefined : capability);
}
