/**
 * Client nodes as the servers know them: identity, attributes, resources, drivers, status.
 */
import type { ClientHostVolumeConfig } from './host-volume.js';
import { noReservedResources, type NodeReservedResources, type NodeResources } from './resources.js';

export const NodeStatus = {
  Initializing: 'initializing',
  Ready: 'ready',
  Down: 'down',
  Disconnected: 'disconnected',
} as const;
export type NodeStatus = (typeof NodeStatus)[keyof typeof NodeStatus];

const NODE_STATUSES: ReadonlySet<string> = new Set(Object.values(NodeStatus));

/** True when the servers cannot reach a node's client: down or disconnected (its allocations are lost). */
export function isNodeUnreachable(s: NodeStatus): boolean {
  return s === NodeStatus.Down || s === NodeStatus.Disconnected;
}

/** True when `v` is one of the node statuses. */
export function isNodeStatus(v: unknown): v is NodeStatus {
  return typeof v === 'string' && NODE_STATUSES.has(v);
}

export const NodeEligibility = {
  Eligible: 'eligible',
  Ineligible: 'ineligible',
} as const;
export type NodeEligibility = (typeof NodeEligibility)[keyof typeof NodeEligibility];

/** What a client knows about one of its drivers. */
export interface DriverInfo {
  Attributes: Record<string, string> | null;
  Detected: boolean;
  Healthy: boolean;
  HealthDescription: string;
  /** RFC 3339. */
  UpdateTime: string;
}

export interface NodeEvent {
  Message: string;
  Subsystem: string;
  Details: Record<string, string> | null;
  /** RFC 3339. */
  Timestamp: string;
  CreateIndex: number;
}

export interface DrainStrategy {
  Deadline: number;
  IgnoreSystemJobs: boolean;
  ForceDeadline: string;
  StartedAt: string;
}

/** A client node. */
export interface Node {
  ID: string;
  SecretID: string;
  Datacenter: string;
  Name: string;
  HTTPAddr: string;
  TLSEnabled: boolean;
  Attributes: Record<string, string>;
  NodeResources: NodeResources;
  ReservedResources: NodeReservedResources | null;
  Links: Record<string, string> | null;
  Meta: Record<string, string>;
  NodeClass: string;
  NodePool: string;
  ComputedClass: string;
  Drivers: Record<string, DriverInfo>;
  /** The host volumes the client offers, by name (Nomad's Node.HostVolumes); absent or null: none. */
  HostVolumes?: Record<string, ClientHostVolumeConfig> | null;
  Status: NodeStatus;
  StatusDescription: string;
  /** Unix seconds, as Nomad reports it. */
  StatusUpdatedAt: number;
  Events: NodeEvent[] | null;
  SchedulingEligibility: NodeEligibility;
  DrainStrategy: DrainStrategy | null;
  Drain: boolean;
  LastDrain: unknown;
  CreateIndex: number;
  ModifyIndex: number;
}

/** One row of GET /v1/nodes. */
export interface NodeListStub {
  Address: string;
  ID: string;
  Attributes?: Record<string, string>;
  Datacenter: string;
  Name: string;
  NodeClass: string;
  NodePool: string;
  Version: string;
  Drain: boolean;
  SchedulingEligibility: NodeEligibility;
  Status: NodeStatus;
  StatusDescription: string;
  Drivers: Record<string, DriverInfo>;
  LastDrain: unknown;
  /** Only with `?resources=true`. */
  NodeResources?: NodeResources;
  ReservedResources?: NodeReservedResources | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** True when the scheduler may place new allocations on this node. */
export function isNodeSchedulable(n: Node): boolean {
  return n.Status === 'ready' && n.SchedulingEligibility === 'eligible' && n.DrainStrategy === null;
}

/**
 * A node with Nomad's defaults for every field not given (status "initializing", eligible, pool
 * "default", datacenter "dc1", no drain, nothing reserved); identity and resources must be given. The one place a
 * Node object is assembled, for the client's fingerprint, tests and benchmarks alike.
 */
export function newNode(fields: Pick<Node, 'ID' | 'Name' | 'NodeResources'> & Partial<Node>): Node {
  return {
    SecretID: '',
    Datacenter: 'dc1',
    HTTPAddr: '',
    TLSEnabled: false,
    Attributes: {},
    ReservedResources: noReservedResources(),
    Links: {},
    Meta: {},
    NodeClass: '',
    NodePool: 'default',
    ComputedClass: '',
    Drivers: {},
    Status: 'initializing',
    StatusDescription: '',
    StatusUpdatedAt: 0,
    Events: null,
    SchedulingEligibility: 'eligible',
    DrainStrategy: null,
    Drain: false,
    LastDrain: null,
    CreateIndex: 0,
    ModifyIndex: 0,
    ...fields,
  };
}
