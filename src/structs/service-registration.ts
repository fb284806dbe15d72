/**
 * Nomad's ServiceRegistration: one instance of a `provider = "nomad"` service, as a client
 * registers it for a running allocation and `/v1/service/:name` answers it. The ID follows
 * Nomad's (and Consul's) `_nomad-task-<alloc>-<owner>-<service>-<port label>`, where the owner
 * is the task name or `group-<group>` for a group service, so a client re-registering the same
 * service writes the same row.
 */
import { createHash } from 'node:crypto';
import { CaravanError } from './caravan-error.js';

/** One registered service instance (Nomad's structs.ServiceRegistration, field for field). */
export interface ServiceRegistration {
  ID: string;
  ServiceName: string;
  Namespace: string;
  NodeID: string;
  Datacenter: string;
  JobID: string;
  AllocID: string;
  Tags: string[] | null;
  Address: string;
  Port: number;
  CreateIndex: number;
  ModifyIndex: number;
}

/** What a client sends: the registration before the FSM stamps its indexes. */
export type ServiceRegistrationInput = Omit<ServiceRegistration, 'CreateIndex' | 'ModifyIndex'>;

/** One service of a namespace with the union of its instances' tags (Nomad's ServiceRegistrationStub). */
export interface ServiceRegistrationStub {
  ServiceName: string;
  Tags: string[];
}

/** The services of one namespace (Nomad's ServiceRegistrationListStub, what `GET /v1/services` lists). */
export interface ServiceRegistrationListStub {
  Namespace: string;
  Services: ServiceRegistrationStub[];
}

/** Nomad's prefix of native service registration IDs. */
export const NOMAD_SERVICE_ID_PREFIX = '_nomad-task-';

/** The owner part of a group service's ID: `group-<name>`, as Nomad's group service hook names it. */
export function groupServiceOwner(group: string): string {
  return `group-${group}`;
}

/** The ID Nomad gives a service instance of an allocation (see the file comment). */
export function serviceRegistrationId(allocId: string, owner: string, serviceName: string, portLabel: string): string {
  return `${NOMAD_SERVICE_ID_PREFIX}${allocId}-${owner}-${serviceName}-${portLabel}`;
}

/** A client's registration Caravan refuses; `field` names what is wrong. */
export class ServiceRegistrationInvalidError extends CaravanError<'SERVICE_REGISTRATION_INVALID'> {
  constructor(readonly field: string, reason: string) {
    super('SERVICE_REGISTRATION_INVALID', { field, reason });
    this.name = 'ServiceRegistrationInvalidError';
  }
}

/** Service names Nomad accepts (an RFC 1123 label: letters, digits and dashes; its validation of `service.name`). */
const SERVICE_NAME = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;
/** Bounds on what one registration may carry, so a client cannot grow the replicated state without limit. */
const MAX_TAGS = 64;
const MAX_TEXT = 512;

/** Whether `name` is a service name Nomad accepts (also used to refuse a lookup's name early). */
export function isValidServiceName(name: string): boolean {
  return SERVICE_NAME.test(name);
}

function text(o: Record<string, unknown>, field: string, i: number, required: boolean): string {
  const v = o[field];
  if (v === undefined || v === null || v === '') {
    if (required) throw new ServiceRegistrationInvalidError(`Services[${i}].${field}`, 'is required');
    return '';
  }
  if (typeof v !== 'string' || v.length > MAX_TEXT) throw new ServiceRegistrationInvalidError(`Services[${i}].${field}`, `must be a string of at most ${MAX_TEXT} characters`);
  return v;
}

/**
 * Checks the shape of the registrations a client sends (`{Services: [...]}` or the list) and
 * answers them as inputs; throws ServiceRegistrationInvalidError naming the first bad field.
 * An address of "any" (0.0.0.0, ::) is refused, as Nomad's Validate does: nobody can dial it.
 */
export function admitServiceRegistrations(raw: unknown): ServiceRegistrationInput[] {
  const list = Array.isArray(raw) ? raw : (raw as { Services?: unknown } | null)?.Services;
  if (!Array.isArray(list)) throw new ServiceRegistrationInvalidError('Services', 'must be a list');
  return list.map((x, i): ServiceRegistrationInput => {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) throw new ServiceRegistrationInvalidError(`Services[${i}]`, 'must be an object');
    const o = x as Record<string, unknown>;
    const name = text(o, 'ServiceName', i, true);
    if (!isValidServiceName(name)) throw new ServiceRegistrationInvalidError(`Services[${i}].ServiceName`, `${JSON.stringify(name)} is not a valid service name`);
    const address = text(o, 'Address', i, true);
    if (address === '0.0.0.0' || address === '::' || address === '[::]') throw new ServiceRegistrationInvalidError(`Services[${i}].Address`, 'invalid service registration address');
    const port = o['Port'];
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) throw new ServiceRegistrationInvalidError(`Services[${i}].Port`, 'must be a port number');
    const tags = o['Tags'];
    if (tags !== undefined && tags !== null && (!Array.isArray(tags) || tags.length > MAX_TAGS || !tags.every((t) => typeof t === 'string' && t.length <= MAX_TEXT))) {
      throw new ServiceRegistrationInvalidError(`Services[${i}].Tags`, `must be a list of at most ${MAX_TAGS} strings`);
    }
    return {
      ID: text(o, 'ID', i, true),
      ServiceName: name,
      Namespace: text(o, 'Namespace', i, true),
      NodeID: text(o, 'NodeID', i, true),
      Datacenter: text(o, 'Datacenter', i, false),
      JobID: text(o, 'JobID', i, true),
      AllocID: text(o, 'AllocID', i, true),
      Tags: Array.isArray(tags) && tags.length > 0 ? (tags as string[]) : null,
      Address: address,
      Port: port,
    };
  });
}

/**
 * The priority of a registration for a requester `key` in rendezvous hashing: Nomad's HashWith
 * (md5 over the port as 8 big-endian bytes, alloc ID, ID, namespace, address, name, tags and
 * the key, in hex), so a `?choose` answers the same instances as Nomad's for the same key.
 */
export function rendezvousHash(s: ServiceRegistration, key: string): string {
  const port = Buffer.alloc(8);
  port.writeBigUInt64BE(BigInt(Math.max(0, s.Port)));
  const h = createHash('md5');
  h.update(port);
  for (const part of [s.AllocID, s.ID, s.Namespace, s.Address, s.ServiceName, ...(s.Tags ?? []), key]) h.update(part, 'utf8');
  return h.digest('hex');
}

/**
 * `?choose=N|key`: the N registrations with the lowest rendezvous hash for `key` (all of them
 * when fewer), lowest first — a stable choice per requester that moves few requesters when an
 * instance comes or goes. Null when the parameter is malformed.
 */
export function chooseServices(services: readonly ServiceRegistration[], parameter: string): ServiceRegistration[] | null {
  const bar = parameter.indexOf('|');
  if (bar < 0) return null;
  const nText = parameter.slice(0, bar);
  const key = parameter.slice(bar + 1);
  if (!/^[+-]?\d+$/.test(nText) || key === '') return null;
  const n = Math.max(0, Math.min(Number(nText), services.length));
  return services
    .map((s) => ({ s, h: rendezvousHash(s, key) }))
    .sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0))
    .slice(0, n)
    .map((p) => p.s);
}

/**
 * Each namespace's services with the union of their instances' tags (what `GET /v1/services`
 * answers), by namespace then service name; `each` calls its argument with every registration.
 */
export function serviceListStubs(each: Iterable<ServiceRegistration> | ((fn: (r: ServiceRegistration) => void) => void)): ServiceRegistrationListStub[] {
  const byNs = new Map<string, Map<string, Set<string>>>();
  const add = (r: ServiceRegistration): void => {
    let names = byNs.get(r.Namespace);
    if (!names) byNs.set(r.Namespace, (names = new Map()));
    let tags = names.get(r.ServiceName);
    if (!tags) names.set(r.ServiceName, (tags = new Set()));
    for (const t of r.Tags ?? []) tags.add(t);
  };
  if (typeof each === 'function') each(add);
  else for (const r of each) add(r);
  const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return [...byNs.keys()].sort(byName).map((ns) => {
    const names = byNs.get(ns)!;
    return { Namespace: ns, Services: [...names.keys()].sort(byName).map((ServiceName) => ({ ServiceName, Tags: [...names.get(ServiceName)!].sort() })) };
  });
}
