/**
 * What a client asks its servers when a task's templates read variables (Nomad's client does
 * this over RPC with the task's workload identity): the reads of one task of one allocation,
 * answered in order, optionally as a blocking query on the variables table. A read is a `get`
 * of one path or a `list` under a prefix; an empty Namespace is the allocation's own.
 */
import type { Variable, VariableMetadata } from './variable.js';
import type { ServiceRegistration, ServiceRegistrationListStub } from './service-registration.js';
import { CaravanError } from './caravan-error.js';

export interface TaskVariableRead {
  /** `service`: the instances of the service named Path; `services`: the namespace's services (templates' nomadService/nomadServices). */
  Op: 'get' | 'list' | 'service' | 'services';
  Namespace: string;
  Path: string;
  /** `service` only: keep the instances with this tag. */
  Tag?: string;
  /** `service` only: `N|key`, a rendezvous choice of N instances. */
  Choose?: string;
}

export interface TaskVariablesRequest {
  AllocID: string;
  Task: string;
  Reads: TaskVariableRead[];
  /** Blocking: answer once the variables table is past this index (or WaitMs passed). */
  MinIndex: number;
  WaitMs: number;
  /**
   * The task's workload identity (its default identity's JWT): when present, it alone decides
   * which workload reads, as Nomad's servers authorize template reads. Absent: the node's
   * SecretID and AllocID/Task (clients that sign no identities).
   */
  Identity?: string;
}

/** One read's answer: the variable (null: none at that path), the list, or why it was refused. */
export type TaskVariableResult =
  | { Variable: Variable | null }
  | { List: VariableMetadata[] }
  | { Services: ServiceRegistration[] }
  | { ServiceList: ServiceRegistrationListStub[] }
  | { Error: string };

export interface TaskVariablesResponse {
  Index: number;
  Results: TaskVariableResult[];
}

/** The most reads one request may carry (a template with more is split by the client). */
export const MAX_TASK_VARIABLE_READS = 256;
/** The longest a blocking read waits (Nomad's maximum query wait). */
export const MAX_TASK_VARIABLE_WAIT_MS = 10 * 60 * 1000;

/** Admits a client's request from its JSON; CLIENT_REPORT_INVALID names the field. */
export function admitTaskVariablesRequest(raw: unknown): TaskVariablesRequest {
  const bad = (reason: string): never => {
    throw new CaravanError('CLIENT_REPORT_INVALID', { reason });
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return bad('body must be an object');
  const r = raw as Record<string, unknown>;
  if (typeof r['AllocID'] !== 'string' || r['AllocID'] === '') return bad('AllocID must be a non-empty string');
  if (typeof r['Task'] !== 'string' || r['Task'] === '') return bad('Task must be a non-empty string');
  const reads = r['Reads'];
  if (!Array.isArray(reads)) return bad('Reads must be a list');
  if (reads.length > MAX_TASK_VARIABLE_READS) return bad(`Reads: at most ${MAX_TASK_VARIABLE_READS} per request`);
  const out: TaskVariableRead[] = reads.map((x: unknown, i) => {
    const o = (x ?? {}) as Record<string, unknown>;
    const op = o['Op'];
    if (op !== 'get' && op !== 'list' && op !== 'service' && op !== 'services') return bad(`Reads[${i}].Op must be "get", "list", "service" or "services"`);
    if (typeof o['Path'] !== 'string') return bad(`Reads[${i}].Path must be a string`);
    if (o['Namespace'] !== undefined && typeof o['Namespace'] !== 'string') return bad(`Reads[${i}].Namespace must be a string`);
    const read: TaskVariableRead = { Op: op, Namespace: (o['Namespace'] as string | undefined) ?? '', Path: o['Path'] };
    for (const k of ['Tag', 'Choose'] as const) {
      const v = o[k];
      if (v === undefined || v === '') continue;
      if (op !== 'service' || typeof v !== 'string') return bad(`Reads[${i}].${k} must be a string, on a "service" read only`);
      read[k] = v;
    }
    return read;
  });
  const num = (k: string): number => {
    const v = r[k] ?? 0;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return bad(`${k} must be a non-negative integer`);
    return v;
  };
  const identity = r['Identity'];
  if (identity !== undefined && (typeof identity !== 'string' || identity === '')) return bad('Identity must be a non-empty string');
  return {
    AllocID: r['AllocID'],
    Task: r['Task'],
    Reads: out,
    MinIndex: num('MinIndex'),
    WaitMs: Math.min(num('WaitMs'), MAX_TASK_VARIABLE_WAIT_MS),
    ...(identity !== undefined ? { Identity: identity } : {}),
  };
}
