/**
 * The native service instances (`provider = "nomad"`) an allocation should have registered,
 * given its tasks' states: a task's services while that task runs, the group's while any of
 * its non-poststop tasks runs (Nomad's group and task service hooks). Pure: the registrar
 * (service-registrar.ts) diffs successive answers and writes the difference to the servers.
 *
 * Address and port follow the service's `address_mode`: `auto` and `host` answer the host
 * address of the port (its HostIP, else the node's address) and the host port; `alloc` and
 * `driver` answer the allocation's network address and the port inside it (`to`, else the
 * host port). An `address` overrides the address. A port is a label of the group's network,
 * or a number used as it is. `${NOMAD_…}` and the other task interpolations are resolved in
 * the name, tags and `address`.
 */
import type { Allocation, TaskState } from '../../structs/alloc.js';
import type { Task, TaskGroup } from '../../structs/job.js';
import type { Service, ServiceCheck } from '../../structs/service.js';
import { ServiceProvider } from '../../structs/service.js';
import { groupServiceOwner, serviceRegistrationId, type ServiceRegistrationInput } from '../../structs/service-registration.js';
import type { TaskDirs } from '../../drivers/driver.js';
import { buildTaskEnv, type NodeInfo } from '../taskenv/task-env.js';
import { interpolateString, type InterpolationScope } from '../taskenv/interpolate.js';

/** A port of the allocation: host value, in-network value and host address. */
interface PortBinding {
  value: number;
  to: number;
  hostIp: string;
}

/** Directories do not matter for a service's interpolation; placeholders keep buildTaskEnv total. */
const NO_DIRS: TaskDirs = { dir: '', localDir: '', secretsDir: '', tmpDir: '', sharedAllocDir: '', logDir: '' };

function allocPorts(alloc: Allocation): Map<string, PortBinding> {
  const out = new Map<string, PortBinding>();
  const shared = alloc.AllocatedResources?.Shared;
  for (const p of shared?.Ports ?? []) out.set(p.Label, { value: p.Value, to: p.To, hostIp: p.HostIP });
  for (const n of shared?.Networks ?? []) {
    for (const p of [...(n.ReservedPorts ?? []), ...(n.DynamicPorts ?? [])]) {
      if (!out.has(p.Label)) out.set(p.Label, { value: p.Value, to: p.To, hostIp: n.IP });
    }
  }
  return out;
}

/** The node's address for host-mode services (its fingerprinted IP; loopback when unknown). */
function nodeAddress(node: NodeInfo): string {
  return node.attributes['unique.network.ip-address'] || '127.0.0.1';
}

/** The allocation's own network address (a bridge network's), else the host's. */
function allocAddress(alloc: Allocation, node: NodeInfo): string {
  const n = alloc.AllocatedResources?.Shared?.Networks?.find((x) => x.Mode !== 'host' && x.IP);
  return n?.IP || nodeAddress(node);
}

/** Address and port of one service (see the file comment); null when its port label is unknown. */
export function serviceAddress(service: Service, alloc: Allocation, node: NodeInfo, scope: InterpolationScope): { address: string; port: number } | null {
  const inAlloc = service.AddressMode === 'alloc' || service.AddressMode === 'driver';
  const label = interpolateString(service.PortLabel, scope);
  let port = 0;
  let hostIp = '';
  if (label !== '') {
    const bound = allocPorts(alloc).get(label);
    if (bound) {
      port = inAlloc && bound.to > 0 ? bound.to : bound.value;
      hostIp = bound.hostIp;
    } else if (/^\d+$/.test(label) && Number(label) <= 65535) {
      port = Number(label);
    } else {
      return null;
    }
  }
  const override = interpolateString(service.Address, scope);
  const address = override !== '' ? override : inAlloc ? allocAddress(alloc, node) : hostIp && hostIp !== '0.0.0.0' ? hostIp : nodeAddress(node);
  return { address, port };
}

function registration(service: Service, owner: string, alloc: Allocation, node: NodeInfo, scope: InterpolationScope): ServiceRegistrationInput | null {
  const at = serviceAddress(service, alloc, node, scope);
  if (!at) return null;
  const name = interpolateString(service.Name, scope);
  const tags = (service.Tags ?? []).map((t) => interpolateString(t, scope));
  return {
    ID: serviceRegistrationId(alloc.ID, owner, name, service.PortLabel),
    ServiceName: name,
    Namespace: alloc.Namespace,
    NodeID: alloc.NodeID,
    Datacenter: node.datacenter,
    JobID: alloc.JobID,
    AllocID: alloc.ID,
    Tags: tags.length > 0 ? tags : null,
    Address: at.address,
    Port: at.port,
  };
}

const isNomad = (s: Service): boolean => s.Provider === ServiceProvider.Nomad;

/** Whether a group or task declares any native service (the registrar is skipped otherwise). */
export function hasNomadServices(group: TaskGroup | undefined): boolean {
  if (!group) return false;
  return (group.Services ?? []).some(isNomad) || group.Tasks.some((t) => (t.Services ?? []).some(isNomad));
}

/** A registered service instance with the service block it came from and the task that owns it (null: the group). */
export interface ActiveService {
  reg: ServiceRegistrationInput;
  service: Service;
  task: string | null;
  /** The service's checks with where each one probes (its own port label or address mode, else the service's). */
  checks: { check: ServiceCheck; address: string; port: number }[];
}

function checkTargets(service: Service, reg: ServiceRegistrationInput, alloc: Allocation, node: NodeInfo, scope: InterpolationScope): ActiveService['checks'] {
  const out: ActiveService['checks'] = [];
  for (const check of service.Checks ?? []) {
    if (!check.PortLabel && !check.AddressMode) {
      out.push({ check, address: reg.Address, port: reg.Port });
      continue;
    }
    const at = serviceAddress({ ...service, PortLabel: check.PortLabel || service.PortLabel, AddressMode: check.AddressMode || service.AddressMode }, alloc, node, scope);
    if (at) out.push({ check, address: at.address, port: at.port });
  }
  return out;
}

/**
 * The services the allocation should have registered now, with their blocks (see the file
 * comment). A service whose port label the allocation does not have is left out (the
 * scheduler placed no such port).
 */
export function allocActiveServices(alloc: Allocation, node: NodeInfo, states: Readonly<Record<string, TaskState>>): ActiveService[] {
  const group = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
  if (!group || alloc.DesiredStatus !== 'run' || !hasNomadServices(group)) return [];
  const out: ActiveService[] = [];
  const running = (t: Task): boolean => states[t.Name]?.State === 'running';
  const poststop = (t: Task): boolean => t.Lifecycle?.Hook === 'poststop';
  if (group.Tasks.some((t) => !poststop(t) && running(t))) {
    const scope = buildTaskEnv({ alloc, group, task: { Name: '', Env: null, Meta: null, Resources: null } as unknown as Task, node, dirs: NO_DIRS }).scope;
    for (const s of (group.Services ?? []).filter(isNomad)) {
      const r = registration(s, groupServiceOwner(group.Name), alloc, node, scope);
      if (r) out.push({ reg: r, service: s, task: null, checks: checkTargets(s, r, alloc, node, scope) });
    }
  }
  for (const task of group.Tasks) {
    const services = (task.Services ?? []).filter(isNomad);
    if (services.length === 0 || !running(task)) continue;
    const scope = buildTaskEnv({ alloc, group, task, node, dirs: NO_DIRS }).scope;
    for (const s of services) {
      const r = registration(s, task.Name, alloc, node, scope);
      if (r) out.push({ reg: r, service: s, task: task.Name, checks: checkTargets(s, r, alloc, node, scope) });
    }
  }
  return out;
}

/** The registrations of allocActiveServices. */
export function allocServiceRegistrations(alloc: Allocation, node: NodeInfo, states: Readonly<Record<string, TaskState>>): ServiceRegistrationInput[] {
  return allocActiveServices(alloc, node, states).map((a) => a.reg);
}
