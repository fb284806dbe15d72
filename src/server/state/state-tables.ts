/**
 * The state store's tables — jobs (with versions and summaries), allocations, evaluations, nodes,
 * deployments and their secondary indexes, and the smaller tables beside them — with every read
 * of them that StateReader names. The big ones are copy-on-write over one EpochClock, so a
 * snapshot of them is O(1) (state-snapshot.ts) and a failed apply's undo log puts them back.
 * StateStore (state-store.ts) extends this with the indexes, the blocking reads and the writes.
 */
import { byPrefix, lookup } from './table-lookups.js';
import { JobScalingEvents } from './job-scaling-events.js';
import { NodePools } from './node-pools.js';
import { VariableTable } from './variable-table.js';
import { HostVolumeTable } from './host-volume-table.js';
import { ServiceRegistrationTable } from './service-registration-table.js';
import { JobSubmissions } from './job-submissions.js';
import { NamespaceTable } from './namespace-table.js';
import { AclTables } from './acl-tables.js';
import { CowIndex, CowTable, EpochClock } from './cow-table.js';
import { JobLiveness } from './job-liveness.js';
import { NodeUsageTable } from './node-usage-table.js';
import { DrainingNodes } from './draining-nodes.js';
import type { SnapshotTables } from './state-snapshot.js';
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { Variable } from '../../structs/variable.js';
import type { NodePool } from '../../structs/node-pool.js';
import type { Namespace } from '../../structs/namespace.js';
import type { Allocation, Deployment, Evaluation, Job, JobSummary, Node } from '../../structs/index.js';

/** The key of a job in the tables: namespace and ID. */
export function jobKey(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

/** The tables of the state and their reads; written only through StateStore, by the FSM. */
export class StateTables implements SnapshotTables {
  readonly epochs = new EpochClock();
  readonly jobsT = new CowTable<string, Job>('jobs', this.epochs);
  readonly jobVersionsT = new CowTable<string, Job[]>('job_versions', this.epochs);
  /** Job sources per version (GET /v1/job/:id/submission); written by the FSM only. */
  readonly submissions = new JobSubmissions();
  /** Scaling events per job and group; written by the FSM only. */
  readonly scalingEvents = new JobScalingEvents();
  /** The namespaces (default always there); written by the FSM only (namespace-fsm.ts). */
  readonly namespaceTable = new NamespaceTable();
  /** ACL tokens, policies and roles; written by the FSM only. */
  readonly acl = new AclTables();
  /** Node pools; written by the FSM only. */
  readonly pools = new NodePools();
  /** Variables; written by the FSM only (variable-fsm.ts). */
  readonly variableTable = new VariableTable();
  /** Service registrations (provider "nomad"); written by the FSM only (service-registration-fsm.ts). */
  readonly serviceTable = new ServiceRegistrationTable(this.epochs);
  /** Dynamic host volumes; written by the FSM only (host-volume-fsm.ts). */
  readonly hostVolumeTable = new HostVolumeTable(this.epochs);
  readonly summariesT = new CowTable<string, JobSummary>('job_summary', this.epochs);
  readonly allocsT = new CowTable<string, Allocation>('allocs', this.epochs);
  readonly evalsT = new CowTable<string, Evaluation>('evals', this.epochs);
  readonly nodesT = new CowTable<string, Node>('nodes', this.epochs);
  readonly deploymentsT = new CowTable<string, Deployment>('deployment', this.epochs);
  readonly allocsByNodeI = new CowIndex('idx_allocs_node', this.epochs);
  readonly allocsByJobI = new CowIndex('idx_allocs_job', this.epochs);
  readonly evalsByJobI = new CowIndex('idx_evals_job', this.epochs);
  readonly deploymentsByJobI = new CowIndex('idx_deploy_job', this.epochs);
  /** Resources held on each node by non-terminal allocations (latest state only). */
  readonly nodeUsage = new NodeUsageTable(this.epochs);
  /** The nodes that drain now: the drainer's pass without reading every node (written by the store only). */
  readonly draining = new DrainingNodes(this.epochs);
  /** Each job's live allocations and evaluations: its status without reading all of them (written by the store only). */
  readonly liveness = new JobLiveness(this.epochs);

  jobs(namespace: string, prefix = ''): Job[] {
    const out: Job[] = [];
    for (const j of this.jobsT.values()) {
      if ((namespace === '*' || j.Namespace === namespace) && j.ID.startsWith(prefix)) out.push(j);
    }
    return out.sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : a.Namespace < b.Namespace ? -1 : 1));
  }

  jobById(namespace: string, id: string): Job | undefined {
    return this.jobsT.get(jobKey(namespace, id));
  }

  jobVersions(namespace: string, id: string): Job[] {
    return this.jobVersionsT.get(jobKey(namespace, id)) ?? [];
  }

  jobSummary(namespace: string, id: string): JobSummary | undefined {
    return this.summariesT.get(jobKey(namespace, id));
  }

  allocs(prefix = ''): Allocation[] {
    return byPrefix(this.allocsT.values(), prefix);
  }

  allocById(id: string): Allocation | undefined {
    return this.allocsT.get(id);
  }

  allocsByJob(namespace: string, jobId: string): Allocation[] {
    return lookup(this.allocsByJobI.get(jobKey(namespace, jobId)), this.allocsT);
  }

  allocsByNode(nodeId: string): Allocation[] {
    return lookup(this.allocsByNodeI.get(nodeId), this.allocsT);
  }

  evals(prefix = ''): Evaluation[] {
    return byPrefix(this.evalsT.values(), prefix);
  }

  evalById(id: string): Evaluation | undefined {
    return this.evalsT.get(id);
  }

  evalsByJob(namespace: string, jobId: string): Evaluation[] {
    return lookup(this.evalsByJobI.get(jobKey(namespace, jobId)), this.evalsT);
  }

  nodes(prefix = ''): Node[] {
    return byPrefix(this.nodesT.values(), prefix);
  }

  nodeById(id: string): Node | undefined {
    return this.nodesT.get(id);
  }

  /** The nodes with a DrainStrategy, by ID; O(draining nodes). */
  drainingNodes(): Node[] {
    return byPrefix(lookup(this.draining.current(), this.nodesT), '');
  }

  deployments(prefix = ''): Deployment[] {
    return byPrefix(this.deploymentsT.values(), prefix);
  }

  deploymentById(id: string): Deployment | undefined {
    return this.deploymentsT.get(id);
  }

  deploymentsByJob(namespace: string, jobId: string): Deployment[] {
    return lookup(this.deploymentsByJobI.get(jobKey(namespace, jobId)), this.deploymentsT).sort(
      (a, b) => b.CreateIndex - a.CreateIndex,
    );
  }

  /** Namespaces whose name starts with `prefix`, sorted by name. */
  namespaces(prefix = ''): Namespace[] {
    return this.namespaceTable.list().filter((n) => n.Name.startsWith(prefix));
  }

  namespaceByName(name: string): Namespace | undefined {
    return this.namespaceTable.get(name);
  }

  nodePools(prefix = ''): NodePool[] {
    return this.pools.list(prefix);
  }

  nodePoolByName(name: string): NodePool | undefined {
    return this.pools.get(name);
  }

  variables(namespace: string, prefix = ''): Variable[] {
    return this.variableTable.list(namespace, prefix);
  }

  variableByPath(namespace: string, path: string): Variable | undefined {
    return this.variableTable.get(namespace, path);
  }

  hostVolumes(namespace: string, prefix = ''): HostVolume[] {
    return this.hostVolumeTable.list(namespace, prefix);
  }

  hostVolumeById(id: string): HostVolume | undefined {
    return this.hostVolumeTable.get(id);
  }

  hostVolumesByNode(nodeId: string): HostVolume[] {
    return this.hostVolumeTable.byNode(nodeId);
  }

  serviceRegistrations(namespace: string): ServiceRegistration[] {
    return this.serviceTable.list(namespace);
  }

  forEachServiceRegistration(namespace: string, fn: (r: ServiceRegistration) => void): void {
    this.serviceTable.forEach(namespace, fn);
  }

  serviceRegistrationsByName(namespace: string, name: string): ServiceRegistration[] {
    return this.serviceTable.byServiceName(namespace, name);
  }

  serviceRegistrationById(id: string): ServiceRegistration | undefined {
    return this.serviceTable.get(id);
  }

  serviceRegistrationsByAlloc(allocId: string): ServiceRegistration[] {
    return this.serviceTable.byAllocId(allocId);
  }

  serviceRegistrationsByJob(namespace: string, jobId: string): ServiceRegistration[] {
    return this.serviceTable.byJobId(namespace, jobId);
  }

  serviceIndex(namespace: string, name: string): number {
    return this.serviceTable.serviceIndex(namespace, name);
  }
}
