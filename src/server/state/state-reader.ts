/**
 * Read access to the state store as endpoints, routes and leader duties see it, and the tables
 * whose indexes blocking queries watch. Implemented by `StateStore` (state-store.ts).
 */
import type { Namespace } from '../../structs/namespace.js';
import type { NodePool } from '../../structs/node-pool.js';
import type { Variable } from '../../structs/variable.js';
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import type { Allocation, Deployment, Evaluation, Job, JobSummary, Node } from '../../structs/index.js';

/** State tables that blocking queries watch. */
export const Table = {
  Jobs: 'jobs',
  JobVersions: 'job_versions',
  JobSummaries: 'job_summary',
  Allocs: 'allocs',
  Evals: 'evals',
  Nodes: 'nodes',
  Deployments: 'deployment',
  SchedulerConfig: 'scheduler_config',
  AutopilotConfig: 'autopilot_config',
  Namespaces: 'namespaces',
  AclTokens: 'acl_token',
  AclPolicies: 'acl_policy',
  AclRoles: 'acl_role',
  NodePools: 'node_pools',
  Variables: 'variables',
  RootKeys: 'root_keys',
  Services: 'service_registrations',
  HostVolumes: 'host_volumes',
} as const;
export type Table = (typeof Table)[keyof typeof Table];

/** The prefix of the per-service pseudo-tables (serviceTableKey). */
export const SERVICE_TABLE_PREFIX = 'service_registrations/';

/**
 * A pseudo-table for blocking on one service: its index is the index at which that service's
 * instances last changed (StateReader.serviceIndex), so a query waiting on it is woken by a
 * change to that service only, not by every change to the service table.
 */
export function serviceTableKey(namespace: string, name: string): Table {
  return `${SERVICE_TABLE_PREFIX}${namespace}\u0000${name}` as Table;
}

/** The prefix of the per-node pseudo-tables (nodeAllocsTableKey, nodeTableKey, nodeHostVolumesTableKey). */
export const NODE_TABLE_PREFIX = 'node/';

/**
 * A pseudo-table for blocking on one node's allocations (a client's watch of its work, Nomad's
 * watch on the allocs-by-node index): its index moves when an allocation on that node is written
 * or deleted, so writes to other nodes' allocations, evaluations, jobs or nodes wake no watch of it.
 */
export function nodeAllocsTableKey(nodeId: string): Table {
  return `${NODE_TABLE_PREFIX}allocs/${nodeId}` as Table;
}

/** A pseudo-table for blocking on one node's own record: its index moves when that node is written or deleted. */
export function nodeTableKey(nodeId: string): Table {
  return `${NODE_TABLE_PREFIX}record/${nodeId}` as Table;
}

/**
 * A pseudo-table for blocking on the dynamic host volumes placed on one node (a client's watch of
 * its volumes): its index moves when one of them is written or deleted, so a volume of another
 * node wakes no client but its own.
 */
export function nodeHostVolumesTableKey(nodeId: string): Table {
  return `${NODE_TABLE_PREFIX}host_volumes/${nodeId}` as Table;
}

/** The prefix of the per-job pseudo-tables (jobRowsTableKey). */
export const JOB_TABLE_PREFIX = 'job/';

/** The tables whose rows of one job have a pseudo-table. */
export type JobRowsTable = typeof Table.Allocs | typeof Table.Evals | typeof Table.Deployments;

/**
 * A pseudo-table for blocking on one job's allocations, evaluations or deployments (Nomad's watch
 * on the allocs-, evals- or deployments-by-job index): its index moves when a row of that job is
 * written or deleted in that table, so other jobs' writes wake no reader of it.
 */
export function jobRowsTableKey(table: JobRowsTable, namespace: string, jobId: string): Table {
  return `${JOB_TABLE_PREFIX}${table}/${namespace}\u0000${jobId}` as Table;
}

/** The pseudo-table of one job's allocations (jobRowsTableKey). */
export function jobAllocsTableKey(namespace: string, jobId: string): Table {
  return jobRowsTableKey(Table.Allocs, namespace, jobId);
}

/** Read access to the current state. Objects returned must not be mutated. */
export interface StateReader {
  /** The latest applied log index. */
  latestIndex(): number;
  /** The index at which a table last changed (Nomad's per-table index). */
  tableIndex(table: Table): number;
  /** The log index of the last snapshot restored into the running cluster (0: none; see StateStore.restoreAt). */
  restoreIndex?(): number;
  /** Blocked readers woken by a change so far (not by their timeout): what writes cost the watches. */
  watchWakeups?(): number;
  jobs(namespace: string, prefix?: string): Job[];
  jobById(namespace: string, id: string): Job | undefined;
  /** All versions of a job, newest first. */
  jobVersions(namespace: string, id: string): Job[];
  jobSummary(namespace: string, id: string): JobSummary | undefined;
  allocs(prefix?: string): Allocation[];
  allocById(id: string): Allocation | undefined;
  allocsByJob(namespace: string, jobId: string): Allocation[];
  allocsByNode(nodeId: string): Allocation[];
  evals(prefix?: string): Evaluation[];
  evalById(id: string): Evaluation | undefined;
  evalsByJob(namespace: string, jobId: string): Evaluation[];
  nodes(prefix?: string): Node[];
  nodeById(id: string): Node | undefined;
  deployments(prefix?: string): Deployment[];
  deploymentById(id: string): Deployment | undefined;
  deploymentsByJob(namespace: string, jobId: string): Deployment[];
  /** Namespaces whose name starts with `prefix`, sorted by name ("default" always exists). */
  namespaces(prefix?: string): Namespace[];
  namespaceByName(name: string): Namespace | undefined;
  /** Node pools whose name starts with `prefix`, by name; the built-in `all` and `default` always. */
  nodePools(prefix?: string): NodePool[];
  nodePoolByName(name: string): NodePool | undefined;
  /** Variables of `namespace` (`*`: all) whose path starts with `prefix`, by namespace then path. */
  variables(namespace: string, prefix?: string): Variable[];
  variableByPath(namespace: string, path: string): Variable | undefined;
  /** Service registrations of `namespace` (`*`: all), by namespace, name, then ID. */
  serviceRegistrations(namespace: string): ServiceRegistration[];
  /** Every registration of `namespace` (`*`: all) to `fn`, in no particular order (the fast path of GET /v1/services). */
  forEachServiceRegistration(namespace: string, fn: (r: ServiceRegistration) => void): void;
  /** The instances of one service of a namespace, by ID. */
  serviceRegistrationsByName(namespace: string, name: string): ServiceRegistration[];
  serviceRegistrationById(id: string): ServiceRegistration | undefined;
  serviceRegistrationsByAlloc(allocId: string): ServiceRegistration[];
  serviceRegistrationsByJob(namespace: string, jobId: string): ServiceRegistration[];
  /** The index at which the instances of one service last changed (0: never); see ServiceRegistrationTable. */
  serviceIndex(namespace: string, name: string): number;
  /** Dynamic host volumes of `namespace` (`*`: all) whose ID starts with `prefix`, by namespace then ID. */
  hostVolumes(namespace: string, prefix?: string): HostVolume[];
  hostVolumeById(id: string): HostVolume | undefined;
  /** The dynamic host volumes placed on a node. */
  hostVolumesByNode(nodeId: string): HostVolume[];
}
