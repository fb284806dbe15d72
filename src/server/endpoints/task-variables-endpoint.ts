/**
 * Variables read for a task's templates (Nomad's Variables.Read/List called with a workload
 * identity). The client presents the task's workload identity (its default identity's JWT),
 * which alone names the workload; a client that signs no identities authenticates with its
 * node's SecretID and names an allocation of that node and one of its tasks instead. The task's
 * claim (namespace, job — the parent's for a dispatched or periodic child —, group, task)
 * decides what it may read (src/acl/workload-variables.ts): a refused `get` answers "Permission
 * denied" for that read, a `list` keeps only what the task may list. A terminal allocation
 * reads nothing, as Nomad treats its identity as expired. Reads may block on the variables
 * table so templates re-render when a variable changes.
 * The same request carries a template's native service reads (`nomadService`, `nomadServices`),
 * limited to the allocation's namespace, and then also blocks on the service table.
 */
import { Acl } from '../../acl/acl.js';
import { parsePolicy } from '../../acl/policy-parser.js';
import { jobAclApplies, workloadMayAccessVariable, type WorkloadClaim } from '../../acl/workload-variables.js';
import { admitTaskVariablesRequest, type TaskVariableResult, type TaskVariablesResponse } from '../../structs/task-variables.js';
import { publicVariable, variableMetadata } from '../../structs/variable.js';
import { chooseServices, serviceListStubs } from '../../structs/service-registration.js';
import { ServerError } from '../server-error.js';
import { serviceTableKey, Table } from '../state/state-reader.js';
import { authenticateNode } from './node-endpoint.js';
import type { EndpointContext } from './endpoint-context.js';
import type { ResolvedWorkload } from './workload-identity-endpoint.js';

const PERMISSION_DENIED = 'Permission denied';

export class TaskVariablesEndpoint {
  constructor(
    private readonly ctx: EndpointContext,
    /** Resolves a task's workload identity (absent: only the node-secret path). */
    private readonly workloads?: { resolve(token: string): ResolvedWorkload },
  ) {}

  async read(raw: unknown, secretId: string, signal?: AbortSignal): Promise<TaskVariablesResponse> {
    const req = admitTaskVariablesRequest(raw);
    const { store } = this.ctx;
    const claim = req.Identity !== undefined ? this.claimOfIdentity(req.Identity, req.AllocID, req.Task) : this.claimOfNode(req.AllocID, req.Task, secretId);

    // The answer's index covers the job's policies too: attaching one may grant a read. Service
    // reads (nomadService) watch the service table as well; variable-only templates do not.
    // One service read watches that service only (its pseudo-table), a list the whole table.
    const watched: Table[] = [Table.Variables, Table.AclPolicies];
    for (const r of req.Reads) {
      if (r.Op === 'service') watched.push(serviceTableKey(r.Namespace || claim.namespace, r.Path));
      if (r.Op === 'services') watched.push(Table.Services);
    }
    const indexOf = (): number => Math.max(1, ...watched.map((t) => store.tableIndex(t)));
    if (req.MinIndex > 0 && indexOf() <= req.MinIndex && req.WaitMs > 0) {
      await store.waitForChange(watched, req.MinIndex, req.WaitMs, signal);
    }
    // Read after the wait: the alloc may have ended, the job's policies changed.
    const now = store.allocById(req.AllocID);
    if (!now || now.ClientStatus === 'complete' || now.ClientStatus === 'failed' || now.ClientStatus === 'lost') throw new ServerError('ACL_PERMISSION_DENIED', {});
    const attached = await this.attachedAcl(claim);
    const results: TaskVariableResult[] = req.Reads.map((r) => {
      const ns = r.Namespace || claim.namespace;
      if (r.Op === 'service' || r.Op === 'services') {
        // A workload identity reads the services of its own namespace (Nomad's implicit policy).
        if (ns !== claim.namespace) return { Error: PERMISSION_DENIED };
        if (r.Op === 'services') return { ServiceList: serviceListStubs((fn) => store.forEachServiceRegistration(ns, fn)) };
        let regs = store.serviceRegistrationsByName(ns, r.Path);
        if (r.Tag) regs = regs.filter((x) => x.Tags?.includes(r.Tag!) ?? false);
        if (r.Choose) {
          const chosen = chooseServices(regs, r.Choose);
          if (!chosen) return { Error: 'invalid format for choose parameter' };
          regs = chosen;
        }
        return { Services: regs };
      }
      if (r.Op === 'get') {
        if (!workloadMayAccessVariable(claim, attached, ns, r.Path, 'read')) return { Error: PERMISSION_DENIED };
        const v = store.variableByPath(ns, r.Path);
        return { Variable: v ? publicVariable(v) : null };
      }
      const list = store
        .variables(ns, r.Path)
        .filter((v) => workloadMayAccessVariable(claim, attached, v.Namespace, v.Path, 'list'))
        .map(variableMetadata);
      return { List: list };
    });
    return { Index: indexOf(), Results: results };
  }

  /**
   * The workload of a task's identity (Nomad's way): the JWT decides, and must be the identity of
   * the allocation and task the request names. Refused (403) when it does not verify.
   */
  private claimOfIdentity(identity: string, allocId: string, task: string): WorkloadClaim {
    if (!this.workloads) throw new ServerError('ACL_PERMISSION_DENIED', {});
    const w = this.workloads.resolve(identity);
    if (w.allocId !== allocId || w.claim.task !== task) throw new ServerError('ACL_PERMISSION_DENIED', {});
    return w.claim;
  }

  /** The workload of a node's allocation and task, for a client that presents no identity (its node's SecretID). */
  private claimOfNode(allocId: string, task: string, secretId: string): WorkloadClaim {
    const { store } = this.ctx;
    // An unknown allocation is refused as a wrong secret is: a caller learns nothing without one.
    const alloc = store.allocById(allocId);
    const node = alloc ? store.nodeById(alloc.NodeID) : undefined;
    if (!alloc || !node) throw new ServerError('NODE_SECRET_MISMATCH', {});
    authenticateNode(node, secretId);
    const group = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
    if (!group?.Tasks.some((t) => t.Name === task)) throw new ServerError('ACL_PERMISSION_DENIED', {});
    return { namespace: alloc.Namespace, job: alloc.Job?.ParentID || alloc.JobID, group: alloc.TaskGroup, task };
  }

  /** The ACL of the policies attached to the claim's job, group or task (null: none). */
  private async attachedAcl(claim: WorkloadClaim): Promise<Acl | null> {
    const policies = this.ctx.store.acl.allPolicies().filter((p) => jobAclApplies(p.JobACL, claim));
    if (policies.length === 0) return null;
    const rules = await Promise.all(policies.map((p) => parsePolicy(p.Rules).catch(() => null)));
    return Acl.compile(rules.filter((r) => r !== null));
  }
}
