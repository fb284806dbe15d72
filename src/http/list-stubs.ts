/**
 * The list rows Nomad answers on GET /v1/jobs and GET /v1/nodes, built from the full objects
 * (the allocation stub lives with the Allocation type in src/structs/alloc.ts).
 */
import type { Job, JobListStub, JobSummary } from '../structs/job.js';
import type { Node, NodeListStub } from '../structs/node.js';
import { CARAVAN_VERSION } from '../structs/version.js';


/** The row of GET /v1/jobs for a job and its summary. */
export function jobListStub(job: Job, summary: JobSummary | undefined): JobListStub {
  return {
    ID: job.ID,
    ParentID: job.ParentID,
    Name: job.Name,
    Namespace: job.Namespace,
    Datacenters: job.Datacenters,
    NodePool: job.NodePool,
    Multiregion: null,
    Type: job.Type,
    Priority: job.Priority,
    Periodic: job.Periodic !== null && job.Periodic !== undefined && job.Periodic.Enabled,
    ParameterizedJob: job.ParameterizedJob !== null && job.ParameterizedJob !== undefined,
    Stop: job.Stop,
    Status: job.Status,
    StatusDescription: job.StatusDescription,
    JobSummary: summary ?? null,
    CreateIndex: job.CreateIndex,
    ModifyIndex: job.ModifyIndex,
    JobModifyIndex: job.JobModifyIndex,
    SubmitTime: job.SubmitTime,
    Meta: job.Meta,
  };
}

/** The host part of a node's HTTP address ("10.0.0.5:4646" → "10.0.0.5"). */
export function nodeAddress(node: Node): string {
  const addr = node.HTTPAddr ?? '';
  if (addr.startsWith('[')) return addr.slice(1, addr.indexOf(']'));
  const colon = addr.lastIndexOf(':');
  return colon > 0 ? addr.slice(0, colon) : addr;
}

/**
 * The row of GET /v1/nodes; attributes only when `?os=true` asked for them, NodeResources and
 * ReservedResources only with `?resources=true` (as Nomad).
 */
export function nodeListStub(node: Node, withOs = false, withResources = false): NodeListStub {
  const stub: NodeListStub = {
    Address: nodeAddress(node),
    ID: node.ID,
    Datacenter: node.Datacenter,
    Name: node.Name,
    NodeClass: node.NodeClass,
    NodePool: node.NodePool,
    Version: node.Attributes?.['nomad.version'] ?? CARAVAN_VERSION,
    Drain: node.Drain,
    SchedulingEligibility: node.SchedulingEligibility,
    Status: node.Status,
    StatusDescription: node.StatusDescription,
    Drivers: node.Drivers,
    LastDrain: node.LastDrain ?? null,
    CreateIndex: node.CreateIndex,
    ModifyIndex: node.ModifyIndex,
  };
  if (withOs) {
    const os = node.Attributes?.['os.name'];
    stub.Attributes = os === undefined ? {} : { 'os.name': os };
  }
  if (withResources) {
    stub.NodeResources = node.NodeResources;
    stub.ReservedResources = node.ReservedResources;
  }
  return stub;
}
