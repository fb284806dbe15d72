/**
 * Which variables a task may read through its workload identity, as Nomad grants them: without
 * any policy, `read` and `list` in the task's own namespace on `nomad/jobs`,
 * `nomad/jobs/<job>`, `nomad/jobs/<job>/<group>` and `nomad/jobs/<job>/<group>/<task>` (each a
 * whole path segment, nothing deeper), plus whatever the ACL policies attached to the job (a
 * policy's JobACL) grant. Everything else is refused, whether or not ACLs are enabled: a task
 * holds no token, only its identity. Pure.
 */
import type { Acl } from './acl.js';

/** The identity a task presents (Nomad's ACLClaim): `job` is the parent's ID for a dispatched or periodic child. */
export interface WorkloadClaim {
  namespace: string;
  job: string;
  group: string;
  task: string;
}

/** Whether the implicit workload grant covers `op` on `path` in `namespace`. */
export function implicitlyAllowed(claim: WorkloadClaim, namespace: string, path: string, op: string): boolean {
  if (op !== 'read' && op !== 'list') return false;
  if (namespace !== claim.namespace) return false;
  const parts = path.split('/');
  const expect = ['nomad', 'jobs', claim.job, claim.group, claim.task];
  if (parts.length > expect.length) return false;
  return parts.every((p, i) => p === expect[i]);
}

/** Whether the task may `op` (read, list) the variable at `path` in `namespace`; `attached` is the ACL of the job's policies. */
export function workloadMayAccessVariable(claim: WorkloadClaim, attached: Acl | null, namespace: string, path: string, op: string): boolean {
  if (implicitlyAllowed(claim, namespace, path, op)) return true;
  return attached !== null && attached.allowVariableOperation(namespace, path, op);
}

/** Whether a policy's JobACL attaches it to the task of `claim` (an empty group or task matches any). */
export function jobAclApplies(jobAcl: { Namespace: string; JobID: string; Group: string; Task: string } | null, claim: WorkloadClaim): boolean {
  if (!jobAcl) return false;
  if ((jobAcl.Namespace || 'default') !== claim.namespace || jobAcl.JobID !== claim.job) return false;
  if (jobAcl.Group && jobAcl.Group !== claim.group) return false;
  if (jobAcl.Task && jobAcl.Task !== claim.task) return false;
  return true;
}
