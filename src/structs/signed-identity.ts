/**
 * What a client asks its servers for a task's workload identities (Nomad's
 * Alloc.SignIdentities) and what it gets back: one signed JWT per identity of the task, the
 * client authenticating with its node's SecretID for an allocation of that node.
 */
import { CaravanError } from './caravan-error.js';

/** The request: the task of one allocation; `Identities` names which ones (empty: all of the task's). */
export interface SignIdentitiesRequest {
  AllocID: string;
  Task: string;
  Identities: string[];
}

/** One signed identity (Nomad's SignedWorkloadIdentity). */
export interface SignedIdentity {
  AllocID: string;
  TaskName: string;
  IdentityName: string;
  JWT: string;
  /** Unix nanoseconds the JWT expires (0: it does not). */
  Expiration: number;
}

/** Admits a client's request from its JSON; CLIENT_REPORT_INVALID names the field. */
export function admitSignIdentitiesRequest(raw: unknown): SignIdentitiesRequest {
  const bad = (reason: string): never => {
    throw new CaravanError('CLIENT_REPORT_INVALID', { reason });
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return bad('body must be an object');
  const r = raw as Record<string, unknown>;
  if (typeof r['AllocID'] !== 'string' || r['AllocID'] === '') return bad('AllocID must be a non-empty string');
  if (typeof r['Task'] !== 'string' || r['Task'] === '') return bad('Task must be a non-empty string');
  const ids = r['Identities'] ?? [];
  if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string')) return bad('Identities must be a list of names');
  return { AllocID: r['AllocID'], Task: r['Task'], Identities: ids };
}
