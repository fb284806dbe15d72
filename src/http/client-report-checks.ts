/**
 * Shape checks for what client agents send the servers (node registrations, task states in
 * alloc updates). These values reach the FSM and the scheduler, which trust their shape, so a
 * malformed report must be refused here with a 400 naming the field rather than stored.
 */
import { isTaskStateName } from '../structs/alloc.js';
import { badRequest } from './http-errors.js';

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
export function checkNodeRegistration(node: Obj): void {
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
}

/** Checks the TaskStates map of one alloc update (`where` names the update, e.g. "Allocs[0]"). */
export function checkTaskStates(raw: unknown, where: string): void {
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
export function checkDeploymentStatus(raw: unknown, where: string): void {
  if (raw === undefined || raw === null) return;
  const ds = requireObject(raw, `${where}.DeploymentStatus`);
  const h = ds['Healthy'];
  if (h !== undefined && h !== null && typeof h !== 'boolean') throw badRequest(`${where}.DeploymentStatus.Healthy must be a boolean or null`);
}
