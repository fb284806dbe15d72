/**
 * The admission of what client agents send the servers — node registrations, heartbeats and
 * allocation updates — for every transport (HTTP and the in-process -dev connection alike).
 * These values reach the FSM and the scheduler, which trust their shape, so a malformed report
 * is refused here, naming the field (CLIENT_REPORT_INVALID, NODE_STATUS_INVALID:
 * 400), rather than stored.
 */
import { isAllocClientStatus, isTaskStateName } from '../structs/alloc.js';
import { isNodeStatus, type Node, type NodeStatus } from '../structs/node.js';
import type { AllocClientUpdate } from '../structs/alloc.js';
import { ServerError } from './server-error.js';

// `what` names the field and says what is wrong with it ("Node.ID must be specified").
function badRequest(what: string): ServerError<'CLIENT_REPORT_INVALID'> {
  return new ServerError('CLIENT_REPORT_INVALID', { reason: what });
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function requireObject(v: unknown, where: string): Obj {
  if (!isObject(v)) throw badRequest(`${where} must be a JSON object`);
  return v;
}

function requireNumber(o: Obj, key: string, where: string): void {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw badRequest(`${where}.${key} must be a non-negative number`);
}

function optionalStringMap(o: Obj, key: string, where: string): void {
  const v = o[key];
  if (v === undefined || v === null) return;
  const m = requireObject(v, `${where}.${key}`);
  for (const [k, val] of Object.entries(m)) {
    if (typeof val !== 'string') throw badRequest(`${where}.${key}[${JSON.stringify(k)}] must be a string`);
  }
}

function optionalTime(o: Obj, key: string, where: string): void {
  const v = o[key];
  if (v !== undefined && v !== null && typeof v !== 'string') throw badRequest(`${where}.${key} must be an RFC 3339 string or null`);
}

/** Checks a node registration: identity, attributes and the resources the scheduler reads. */
function checkNodeRegistration(node: Obj): void {
  const where = 'Node';
  if (typeof node['ID'] !== 'string' || node['ID'] === '') throw badRequest('Node.ID must be specified');
  for (const key of ['Name', 'Datacenter', 'NodeClass', 'NodePool', 'HTTPAddr']) {
    if (node[key] !== undefined && typeof node[key] !== 'string') throw badRequest(`Node.${key} must be a string`);
  }
  optionalStringMap(node, 'Attributes', where);
  optionalStringMap(node, 'Meta', where);
  const res = requireObject(node['NodeResources'], 'Node.NodeResources');
  requireNumber(requireObject(res['Cpu'], 'Node.NodeResources.Cpu'), 'CpuShares', 'Node.NodeResources.Cpu');
  requireNumber(requireObject(res['Memory'], 'Node.NodeResources.Memory'), 'MemoryMB', 'Node.NodeResources.Memory');
  requireNumber(requireObject(res['Disk'], 'Node.NodeResources.Disk'), 'DiskMB', 'Node.NodeResources.Disk');
  const drivers = node['Drivers'];
  if (drivers !== undefined && drivers !== null) {
    for (const [name, info] of Object.entries(requireObject(drivers, 'Node.Drivers'))) {
      const d = requireObject(info, `Node.Drivers.${name}`);
      for (const flag of ['Detected', 'Healthy']) {
        if (d[flag] !== undefined && typeof d[flag] !== 'boolean') throw badRequest(`Node.Drivers.${name}.${flag} must be a boolean`);
      }
    }
  }
  // The scheduler places host-volume groups by these (host-volume.ts).
  const volumes = node['HostVolumes'];
  if (volumes !== undefined && volumes !== null) {
    for (const [name, info] of Object.entries(requireObject(volumes, 'Node.HostVolumes'))) {
      const v = requireObject(info, `Node.HostVolumes.${name}`);
      if (typeof v['Path'] !== 'string') throw badRequest(`Node.HostVolumes.${name}.Path must be a string`);
      if (v['ReadOnly'] !== undefined && typeof v['ReadOnly'] !== 'boolean') throw badRequest(`Node.HostVolumes.${name}.ReadOnly must be a boolean`);
    }
  }
}

/** Checks the TaskStates map of one alloc update (`where` names the update, e.g. "Allocs[0]"). */
function checkTaskStates(raw: unknown, where: string): void {
  if (raw === undefined || raw === null) return;
  for (const [task, value] of Object.entries(requireObject(raw, `${where}.TaskStates`))) {
    const at = `${where}.TaskStates.${task}`;
    const ts = requireObject(value, at);
    if (!isTaskStateName(ts['State'])) {
      throw badRequest(`${at}.State ${JSON.stringify(ts['State'])} is not a task state (pending, running, dead)`);
    }
    if (ts['Failed'] !== undefined && typeof ts['Failed'] !== 'boolean') throw badRequest(`${at}.Failed must be a boolean`);
    if (ts['Restarts'] !== undefined) requireNumber(ts, 'Restarts', at);
    for (const key of ['StartedAt', 'FinishedAt', 'LastRestart']) optionalTime(ts, key, at);
    const events = ts['Events'];
    if (events !== undefined && events !== null) {
      if (!Array.isArray(events)) throw badRequest(`${at}.Events must be an array`);
      events.forEach((e, i) => {
        const ev = requireObject(e, `${at}.Events[${i}]`);
        if (typeof ev['Type'] !== 'string') throw badRequest(`${at}.Events[${i}].Type must be a string`);
      });
    }
  }
}

/** Checks an alloc update's DeploymentStatus: null, or an object whose Healthy is a boolean or null. */
function checkDeploymentStatus(raw: unknown, where: string): void {
  if (raw === undefined || raw === null) return;
  const ds = requireObject(raw, `${where}.DeploymentStatus`);
  const h = ds['Healthy'];
  if (h !== undefined && h !== null && typeof h !== 'boolean') throw badRequest(`${where}.DeploymentStatus.Healthy must be a boolean or null`);
}

/** Admits a node registration: the Node of a register request, shape-checked. */
export function admitNodeRegistration(raw: unknown): Node {
  const node = requireObject(raw, 'Node');
  checkNodeRegistration(node);
  if (typeof node['Datacenter'] !== 'string' || node['Datacenter'] === '') throw badRequest('Node.Datacenter must be specified');
  if (node['Status'] !== undefined && !isNodeStatus(node['Status'])) {
    throw badRequest(`Node.Status ${JSON.stringify(node['Status'])} is not a node status`);
  }
  // As Nomad: the secret authenticates every later call of this node's client.
  if (typeof node['SecretID'] !== 'string' || node['SecretID'] === '') throw badRequest('Node.SecretID must be specified');
  // Every field the servers read has been checked above; the rest is stored as sent.
  return node as Obj & Node;
}

/** Admits the Status of a heartbeat: a node status, "ready" when empty or absent. */
export function admitHeartbeatStatus(raw: unknown): NodeStatus {
  if (raw === undefined || raw === null || raw === '') return 'ready';
  if (!isNodeStatus(raw)) throw new ServerError('NODE_STATUS_INVALID', { status: JSON.stringify(raw) });
  return raw;
}

/** Checks the shape of one client alloc update; the message names the index and field. */
function admitAllocUpdate(raw: unknown, i: number): AllocClientUpdate {
  const where = `Allocs[${i}]`;
  const u = requireObject(raw, where);
  if (typeof u['ID'] !== 'string' || u['ID'] === '') throw badRequest(`${where}.ID must be specified`);
  if (!isAllocClientStatus(u['ClientStatus'])) {
    throw badRequest(`${where}.ClientStatus ${JSON.stringify(u['ClientStatus'])} is not a client status`);
  }
  const ts = u['TaskStates'];
  checkTaskStates(ts, where);
  checkDeploymentStatus(u['DeploymentStatus'], where);
  return {
    ID: u['ID'],
    NodeID: typeof u['NodeID'] === 'string' ? u['NodeID'] : '',
    ClientStatus: u['ClientStatus'],
    ClientDescription: typeof u['ClientDescription'] === 'string' ? u['ClientDescription'] : '',
    // Checked by checkTaskStates / checkDeploymentStatus above.
    TaskStates: (ts ?? {}) as AllocClientUpdate['TaskStates'],
    DeploymentStatus: (u['DeploymentStatus'] ?? null) as AllocClientUpdate['DeploymentStatus'],
    ...(u['NetworkStatus'] !== undefined && u['NetworkStatus'] !== null ? { NetworkStatus: admitNetworkStatus(u['NetworkStatus'], where) } : {}),
  };
}

/** Checks an update's NetworkStatus: an interface name and an address (strings), DNS lists of strings or null. */
function admitNetworkStatus(raw: unknown, where: string): NonNullable<AllocClientUpdate['NetworkStatus']> {
  const n = requireObject(raw, `${where}.NetworkStatus`);
  const str = (k: string): string => {
    const v = n[k] ?? '';
    if (typeof v !== 'string') throw badRequest(`${where}.NetworkStatus.${k} must be a string`);
    return v;
  };
  const dnsRaw = n['DNS'];
  let dns: NonNullable<AllocClientUpdate['NetworkStatus']>['DNS'] = null;
  if (dnsRaw !== undefined && dnsRaw !== null) {
    const d = requireObject(dnsRaw, `${where}.NetworkStatus.DNS`);
    const list = (k: string): string[] => {
      const v = d[k] ?? [];
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw badRequest(`${where}.NetworkStatus.DNS.${k} must be a list of strings`);
      return v as string[];
    };
    dns = { Servers: list('Servers'), Searches: list('Searches'), Options: list('Options') };
  }
  return { InterfaceName: str('InterfaceName'), Address: str('Address'), DNS: dns };
}

/** Admits a batch of alloc updates (the Allocs of an update request). */
export function admitAllocUpdates(raw: unknown): AllocClientUpdate[] {
  if (!Array.isArray(raw)) throw badRequest('Allocs must be a list of allocation updates');
  return raw.map(admitAllocUpdate);
}
