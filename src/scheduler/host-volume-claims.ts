/**
 * The claim half of Nomad's host volume check: a dynamic host volume claimed with access mode
 * `single-node-single-writer` is refused to a placement while any other group on the node
 * (another job's, or an allocation of this same group) mounts it read-write — as Nomad's
 * hostVolumeIsAvailable looks at the node's proposed allocations. Whether the node offers the
 * volume with a fitting capability at all is nodeHasHostVolumes (static feasibility); this
 * part depends on what the plan placed and stopped, so it is checked per placement.
 */
import type { Job, Node, TaskGroup } from '../structs/index.js';
import { hostVolumeRequestAccessMode, hostVolumeSource, VolumeType, type VolumeRequest } from '../structs/host-volume.js';
import { isLiveAlloc } from '../structs/alloc.js';
import type { SchedulerState } from './interfaces.js';

/** The access mode whose claims exclude each other. */
export const SINGLE_WRITER_ACCESS_MODE = 'single-node-single-writer';

/** The group's host volume requests that claim a volume as its single writer (their claims are checked per placement). */
export function singleWriterRequests(requests: readonly VolumeRequest[]): VolumeRequest[] {
  return requests.filter((r) => hostVolumeRequestAccessMode(r) === SINGLE_WRITER_ACCESS_MODE);
}

function groupWrites(group: TaskGroup | undefined, volumeName: string): boolean {
  return Object.values(group?.Volumes ?? {}).some((v) => v.Type === VolumeType.Host && v.Source === volumeName && !v.ReadOnly);
}

/**
 * True when no allocation proposed on the node (live in state, or placed by this plan) belongs
 * to a group that mounts one of the requested single-writer volumes read-write. `jobGroupsOnNode`
 * counts this job's proposed allocations on the node by group (the plan's stops taken out), so
 * this job is judged by the plan, other jobs by the state.
 */
export function singleWriterClaimsFree(
  state: Pick<SchedulerState, 'allocsByNode' | 'jobById' | 'hostVolumeById'>,
  job: Job,
  node: Node,
  requests: readonly VolumeRequest[],
  allocName: string,
  jobGroupsOnNode: ReadonlyMap<string, number> | undefined,
): boolean {
  const names: string[] = [];
  for (const req of requests) {
    const offered = node.HostVolumes?.[hostVolumeSource(req, allocName)];
    // Static volumes have no claims (Nomad checks them for read-only only).
    if (!offered?.ID) continue;
    const vol = state.hostVolumeById?.(offered.ID);
    if (vol) names.push(vol.Name);
  }
  if (names.length === 0) return true;
  for (const [groupName, count] of jobGroupsOnNode ?? []) {
    if (count <= 0) continue;
    const group = job.TaskGroups.find((g) => g.Name === groupName);
    if (names.some((n) => groupWrites(group, n))) return false;
  }
  // All allocations of one group ask the same, so each group is looked at once.
  const seen = new Set<string>();
  for (const a of state.allocsByNode(node.ID)) {
    if (a.Namespace === job.Namespace && a.JobID === job.ID) continue;
    if (!isLiveAlloc(a)) continue;
    const key = `${a.Namespace}\u0000${a.JobID}\u0000${a.TaskGroup}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const other = state.jobById(a.Namespace, a.JobID) ?? a.Job;
    const group = other?.TaskGroups.find((g) => g.Name === a.TaskGroup);
    if (names.some((n) => groupWrites(group, n))) return false;
  }
  return true;
}
