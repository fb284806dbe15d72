/**
 * Nomad's Namespace object (`/v1/namespace(s)`, `caravan namespace apply`): a name, a
 * description, free-form Meta, and Capabilities (task drivers and network modes allowed or
 * refused, checked at job submission). `default` always exists and cannot be deleted. Quota,
 * node pool, Vault and Consul settings are Nomad Enterprise features: stored as given, unused.
 */
import { CaravanError } from './caravan-error.js';

/** What a namespace allows its jobs; empty lists allow everything. */
export interface NamespaceCapabilities {
  EnabledTaskDrivers: string[] | null;
  DisabledTaskDrivers: string[] | null;
  EnabledNetworkModes: string[] | null;
  DisabledNetworkModes: string[] | null;
}

/** A namespace as stored and answered. */
export interface Namespace {
  Name: string;
  Description: string;
  Quota: string;
  Capabilities: NamespaceCapabilities | null;
  NodePoolConfiguration: Record<string, unknown> | null;
  Meta: Record<string, string> | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** The namespace every cluster has. */
export const DEFAULT_NAMESPACE = 'default';

/** Nomad's rule for names (structs.validNamespaceName): letters, digits and dashes, 1–128. */
const NAME_RE = /^[a-zA-Z0-9-]{1,128}$/;

/** Nomad's limit on a description's length. */
const MAX_DESCRIPTION = 256;

/** The default namespace as a new cluster has it. */
export function defaultNamespace(): Namespace {
  return {
    Name: DEFAULT_NAMESPACE,
    Description: 'Default shared namespace',
    Quota: '',
    Capabilities: null,
    NodePoolConfiguration: null,
    Meta: null,
    CreateIndex: 1,
    ModifyIndex: 1,
  };
}

/** A namespace request that does not fit; `field` names the offending setting. */
export class NamespaceInputError extends CaravanError<'NAMESPACE_INVALID'> {
  constructor(field: string, reason: string) {
    super('NAMESPACE_INVALID', { field, reason });
    this.name = 'NamespaceInputError';
  }
}

type Obj = Record<string, unknown>;

function optString(o: Obj, key: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new NamespaceInputError(key, `must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function stringList(o: Obj, key: string, field: string): string[] | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new NamespaceInputError(field, 'must be a list of strings');
  return v as string[];
}

function stringMap(o: Obj, key: string): Record<string, string> | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw new NamespaceInputError(key, 'must be a map of strings');
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v as Obj)) {
    if (typeof val !== 'string') throw new NamespaceInputError(`${key}.${k}`, `must be a string, got ${JSON.stringify(val)}`);
    out[k] = val;
  }
  return out;
}

/** Checks a name as Nomad does. */
export function validateNamespaceName(name: string): void {
  if (!NAME_RE.test(name)) throw new NamespaceInputError('Name', `invalid name ${JSON.stringify(name)}: must match ${NAME_RE.source}`);
}

/**
 * Decodes a namespace from a request body (Nomad's API JSON); indexes are the server's to set.
 * Throws NamespaceInputError naming the field.
 */
export function namespaceFromInput(raw: unknown): Namespace {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new NamespaceInputError('Namespace', 'must be an object');
  const o = raw as Obj;
  const name = optString(o, 'Name');
  validateNamespaceName(name);
  const description = optString(o, 'Description');
  if (description.length > MAX_DESCRIPTION) throw new NamespaceInputError('Description', `longer than ${MAX_DESCRIPTION} characters`);
  let capabilities: NamespaceCapabilities | null = null;
  const c = o['Capabilities'];
  if (c !== undefined && c !== null) {
    if (typeof c !== 'object' || Array.isArray(c)) throw new NamespaceInputError('Capabilities', 'must be an object');
    const co = c as Obj;
    capabilities = {
      EnabledTaskDrivers: stringList(co, 'EnabledTaskDrivers', 'Capabilities.EnabledTaskDrivers'),
      DisabledTaskDrivers: stringList(co, 'DisabledTaskDrivers', 'Capabilities.DisabledTaskDrivers'),
      EnabledNetworkModes: stringList(co, 'EnabledNetworkModes', 'Capabilities.EnabledNetworkModes'),
      DisabledNetworkModes: stringList(co, 'DisabledNetworkModes', 'Capabilities.DisabledNetworkModes'),
    };
  }
  const npc = o['NodePoolConfiguration'];
  if (npc !== undefined && npc !== null && (typeof npc !== 'object' || Array.isArray(npc))) {
    throw new NamespaceInputError('NodePoolConfiguration', 'must be an object');
  }
  return {
    Name: name,
    Description: description,
    Quota: optString(o, 'Quota'),
    Capabilities: capabilities,
    NodePoolConfiguration: (npc as Obj | null | undefined) ?? null,
    Meta: stringMap(o, 'Meta'),
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/**
 * The first task driver of `drivers` the namespace's capabilities refuse, with why; undefined
 * when all are allowed (Nomad's namespace submission check).
 */
export function refusedTaskDriver(ns: Namespace, drivers: Iterable<string>): string | undefined {
  const caps = ns.Capabilities;
  if (!caps) return undefined;
  for (const d of drivers) {
    if (caps.DisabledTaskDrivers?.includes(d)) return `used task driver "${d}" is disabled in namespace "${ns.Name}"`;
    if (caps.EnabledTaskDrivers && caps.EnabledTaskDrivers.length > 0 && !caps.EnabledTaskDrivers.includes(d)) {
      return `used task driver "${d}" is not allowed in namespace "${ns.Name}"`;
    }
  }
  return undefined;
}
