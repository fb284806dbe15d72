/**
 * A read-only view of the state narrowed to what a token may read: jobs, allocations,
 * evaluations and deployments of the namespaces where it has read-job, nodes only with
 * node:read. Search runs on this view, so its results (prefix and fuzzy, any namespace or
 * `*`) never name what the token may not see.
 */
import type { Acl } from '../../acl/acl.js';
import type { StateReader } from '../../server/state/state-reader.js';

/** `state` as `acl` may read it (the state itself for a management token). */
export function aclFilteredState(state: StateReader, acl: Acl): StateReader {
  if (acl.isManagement) return state;
  const ok = (x: { Namespace: string }): boolean => acl.allowNamespaceOperation(x.Namespace, 'read-job');
  const nodes = acl.allowNodeRead();
  return {
    latestIndex: () => state.latestIndex(),
    tableIndex: (t) => state.tableIndex(t),
    jobs: (ns, prefix) => state.jobs(ns, prefix).filter(ok),
    jobById: (ns, id) => [state.jobById(ns, id)].find((j) => j && ok(j)),
    jobVersions: (ns, id) => state.jobVersions(ns, id).filter(ok),
    jobSummary: (ns, id) => [state.jobSummary(ns, id)].find((s) => s && ok(s)),
    allocs: (prefix) => state.allocs(prefix).filter(ok),
    allocById: (id) => [state.allocById(id)].find((a) => a && ok(a)),
    allocsByJob: (ns, id) => state.allocsByJob(ns, id).filter(ok),
    allocsByNode: (id) => state.allocsByNode(id).filter(ok),
    evals: (prefix) => state.evals(prefix).filter(ok),
    evalById: (id) => [state.evalById(id)].find((e) => e && ok(e)),
    evalsByJob: (ns, id) => state.evalsByJob(ns, id).filter(ok),
    nodes: (prefix) => (nodes ? state.nodes(prefix) : []),
    nodeById: (id) => (nodes ? state.nodeById(id) : undefined),
    deployments: (prefix) => state.deployments(prefix).filter(ok),
    deploymentById: (id) => [state.deploymentById(id)].find((d) => d && ok(d)),
    deploymentsByJob: (ns, id) => state.deploymentsByJob(ns, id).filter(ok),
    namespaces: (prefix) => state.namespaces(prefix).filter((n) => acl.allowNamespace(n.Name)),
    namespaceByName: (name) => (acl.allowNamespace(name) ? state.namespaceByName(name) : undefined),
    // Node pools go with node:read here (Caravan has no node_pool rule of its own yet).
    nodePools: (prefix) => (nodes ? state.nodePools(prefix) : []),
    nodePoolByName: (name) => (nodes ? state.nodePoolByName(name) : undefined),
    // Variables by the policy's `variables { path … }` rules (list to see one at all).
    variables: (ns, prefix) => state.variables(ns, prefix).filter((v) => acl.allowVariableOperation(v.Namespace, v.Path, 'list')),
    variableByPath: (ns, path) => (acl.allowVariableOperation(ns, path, 'read') ? state.variableByPath(ns, path) : undefined),
    serviceRegistrations: (ns) => state.serviceRegistrations(ns).filter(ok),
    forEachServiceRegistration: (ns, fn) => state.forEachServiceRegistration(ns, (r) => {
      if (ok(r)) fn(r);
    }),
    serviceRegistrationsByName: (ns, name) => state.serviceRegistrationsByName(ns, name).filter(ok),
    serviceRegistrationById: (id) => [state.serviceRegistrationById(id)].find((r) => r && ok(r)),
    serviceRegistrationsByAlloc: (id) => state.serviceRegistrationsByAlloc(id).filter(ok),
    serviceRegistrationsByJob: (ns, id) => state.serviceRegistrationsByJob(ns, id).filter(ok),
    serviceIndex: (ns, name) => state.serviceIndex(ns, name),
    // Dynamic host volumes by the namespace's host-volume-read.
    hostVolumes: (ns, prefix) => state.hostVolumes(ns, prefix).filter((v) => acl.allowNamespaceOperation(v.Namespace, 'host-volume-read')),
    hostVolumeById: (id) => [state.hostVolumeById(id)].find((v) => v && acl.allowNamespaceOperation(v.Namespace, 'host-volume-read')),
    hostVolumesByNode: (id) => state.hostVolumesByNode(id).filter((v) => acl.allowNamespaceOperation(v.Namespace, 'host-volume-read')),
  };
}
