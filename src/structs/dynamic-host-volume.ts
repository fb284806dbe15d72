/**
 * Nomad 1.10's dynamic host volumes: a volume created through the API (`nomad volume create`
 * with `type = "host"`) on one client by a host volume plugin (the built-in `mkdir`), or
 * registered there from an existing path (`nomad volume register`). The shapes are Nomad's
 * (api/host_volumes.go); admission here checks a request's fields and names the bad one.
 * Static host volumes (the client's `host_volume` blocks) are in host-volume.ts.
 */
import { CaravanError } from './caravan-error.js';
import type { Constraint } from './job.js';

/** A volume's state, as Nomad's HostVolumeState: pending until its node fingerprints it. */
export const HostVolumeState = { Pending: 'pending', Ready: 'ready', Unavailable: 'unavailable' } as const;
export type HostVolumeState = (typeof HostVolumeState)[keyof typeof HostVolumeState];

/** The built-in plugin (Nomad's HostVolumePluginMkdirID): a directory under the client's host_volumes_dir. */
export const MKDIR_PLUGIN_ID = 'mkdir';
/** The version the built-in plugin fingerprints (`plugins.host_volume.mkdir.version`). */
export const MKDIR_PLUGIN_VERSION = '0.0.1';
/** The node attribute a client sets for each host volume plugin it has. */
export function pluginVersionAttribute(pluginId: string): string {
  return `plugins.host_volume.${pluginId}.version`;
}

/** Nomad's attachment modes. */
export const HOST_VOLUME_ATTACHMENT_MODES = ['file-system', 'block-device'] as const;
/** Nomad's access modes. */
export const HOST_VOLUME_ACCESS_MODES = ['single-node-reader-only', 'single-node-writer', 'single-node-single-writer', 'single-node-multi-writer'] as const;

/** One `capability { attachment_mode access_mode }` (Nomad's HostVolumeCapability). */
export interface HostVolumeCapability {
  AttachmentMode: string;
  AccessMode: string;
}

/** A dynamic host volume as stored and answered (Nomad's HostVolume). */
export interface HostVolume {
  Namespace: string;
  ID: string;
  Name: string;
  /** "" for a registered volume (no plugin ran). */
  PluginID: string;
  NodePool: string;
  NodeID: string;
  Constraints: Constraint[] | null;
  RequestedCapacityMinBytes: number;
  RequestedCapacityMaxBytes: number;
  CapacityBytes: number;
  RequestedCapabilities: HostVolumeCapability[];
  Parameters: Record<string, string> | null;
  /** Where the volume is on its node; "" until the plugin ran. */
  HostPath: string;
  State: HostVolumeState;
  CreateIndex: number;
  CreateTime: number;
  ModifyIndex: number;
  ModifyTime: number;
  /**
   * Caravan's own: a delete was accepted and the node has not yet removed the volume. Never
   * answered by the API (hostVolumeView strips it); the node's client acts on it.
   */
  DeleteRequested?: boolean;
}

/** What the list answers (Nomad's HostVolumeStub). */
export type HostVolumeStub = Pick<HostVolume, 'Namespace' | 'ID' | 'Name' | 'PluginID' | 'NodePool' | 'NodeID' | 'CapacityBytes' | 'State' | 'CreateIndex' | 'CreateTime' | 'ModifyIndex' | 'ModifyTime'>;

/** The API form of a stored volume (the internal delete flag dropped). */
export function hostVolumeView(v: HostVolume): Omit<HostVolume, 'DeleteRequested'> {
  const { DeleteRequested: _internal, ...rest } = v;
  return rest;
}

export function hostVolumeStub(v: HostVolume): HostVolumeStub {
  return {
    Namespace: v.Namespace,
    ID: v.ID,
    Name: v.Name,
    PluginID: v.PluginID,
    NodePool: v.NodePool,
    NodeID: v.NodeID,
    CapacityBytes: v.CapacityBytes,
    State: v.State,
    CreateIndex: v.CreateIndex,
    CreateTime: v.CreateTime,
    ModifyIndex: v.ModifyIndex,
    ModifyTime: v.ModifyTime,
  };
}

/** A volume request that cannot be admitted; `field` names what is wrong. */
export class HostVolumeInvalidError extends CaravanError<'HOST_VOLUME_INVALID'> {
  constructor(readonly field: string, reason: string) {
    super('HOST_VOLUME_INVALID', { reason: `${field}: ${reason}` });
    this.name = 'HostVolumeInvalidError';
  }
}

/**
 * A volume name: what a group's `volume { source }` names. Letters, digits, `_`, `-` and `.`
 * (not `.`/`..`), optionally followed by `[N]` for per_alloc groups. It never becomes a path
 * (directories are named by ID), but a name that looks like one is refused all the same.
 */
const VOLUME_NAME = /^[A-Za-z0-9_.-]{1,128}(\[\d{1,6}\])?$/;
/** A volume ID: the server's UUIDs; the only thing a plugin's directory is named by. */
export const VOLUME_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A plugin ID: a plain file name in the client's host_volume_plugin_dir. */
export const PLUGIN_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The fields of a create or register request, admitted (server fields unset). */
export type HostVolumeRequest = Pick<
  HostVolume,
  | 'Namespace'
  | 'ID'
  | 'Name'
  | 'PluginID'
  | 'NodePool'
  | 'NodeID'
  | 'Constraints'
  | 'RequestedCapacityMinBytes'
  | 'RequestedCapacityMaxBytes'
  | 'RequestedCapabilities'
  | 'Parameters'
  | 'HostPath'
>;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(o: Obj, key: string, field = `Volume.${key}`): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new HostVolumeInvalidError(field, 'must be a string');
  return v;
}

function bytes(o: Obj, key: string): number {
  const v = o[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new HostVolumeInvalidError(`Volume.${key}`, 'must be a whole number of bytes, 0 or more');
  return v;
}

/**
 * Admits the `Volume` of a create (`op` "create") or register request body, as Nomad's
 * HostVolume.Validate: a valid name, capacities in order, known capability modes, string
 * parameters; a register needs its node and an absolute host path, a create a plugin name
 * (default `mkdir`) and no host path. The namespace defaults to `namespace` (the request's).
 */
export function admitHostVolume(body: unknown, op: 'create' | 'register', namespace: string): HostVolumeRequest {
  if (!isObj(body) || !isObj(body['Volume'])) throw new HostVolumeInvalidError('Volume', 'is required');
  const v = body['Volume'];
  const name = str(v, 'Name');
  if (name === '') throw new HostVolumeInvalidError('Volume.Name', 'missing name');
  if (!VOLUME_NAME.test(name) || name === '.' || name === '..') {
    throw new HostVolumeInvalidError('Volume.Name', `invalid name ${JSON.stringify(name)}: use letters, digits, "_", "-" and ".", optionally followed by "[N]"`);
  }
  const id = str(v, 'ID');
  if (id !== '' && !VOLUME_ID.test(id)) throw new HostVolumeInvalidError('Volume.ID', `invalid ID ${JSON.stringify(id)}`);
  let pluginId = str(v, 'PluginID');
  if (op === 'create' && pluginId === '') pluginId = MKDIR_PLUGIN_ID;
  if (pluginId !== '' && !PLUGIN_ID.test(pluginId)) {
    throw new HostVolumeInvalidError('Volume.PluginID', `invalid plugin ID ${JSON.stringify(pluginId)}: a plugin is named by a plain file name in the client's host_volume_plugin_dir`);
  }
  const nodeId = str(v, 'NodeID');
  const hostPath = str(v, 'HostPath');
  if (op === 'register') {
    if (nodeId === '') throw new HostVolumeInvalidError('Volume.NodeID', 'missing node ID: a registered volume names the node it is on');
    if (!hostPath.startsWith('/') || hostPath.split('/').includes('..')) throw new HostVolumeInvalidError('Volume.HostPath', `must be an absolute path without "..", got ${JSON.stringify(hostPath)}`);
  } else if (hostPath !== '') {
    throw new HostVolumeInvalidError('Volume.HostPath', 'is set by the plugin: a volume to create names none');
  }
  const min = bytes(v, 'RequestedCapacityMinBytes');
  const max = bytes(v, 'RequestedCapacityMaxBytes');
  if (max > 0 && min > max) throw new HostVolumeInvalidError('Volume.RequestedCapacityMaxBytes', 'capacity_max must be greater than or equal to capacity_min');
  return {
    Namespace: str(v, 'Namespace') || namespace,
    ID: id,
    Name: name,
    PluginID: pluginId,
    NodePool: str(v, 'NodePool'),
    NodeID: nodeId,
    Constraints: admitConstraints(v['Constraints']),
    RequestedCapacityMinBytes: min,
    RequestedCapacityMaxBytes: max,
    RequestedCapabilities: admitCapabilities(v['RequestedCapabilities']),
    Parameters: admitParameters(v['Parameters']),
    HostPath: hostPath,
  };
}

function admitConstraints(raw: unknown): Constraint[] | null {
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw)) throw new HostVolumeInvalidError('Volume.Constraints', 'must be a list');
  return raw.map((c, i) => {
    const f = `Volume.Constraints[${i}]`;
    if (!isObj(c)) throw new HostVolumeInvalidError(f, 'must be an object');
    const out = { LTarget: str(c, 'LTarget', `${f}.LTarget`), RTarget: str(c, 'RTarget', `${f}.RTarget`), Operand: str(c, 'Operand', `${f}.Operand`) || '=' };
    if (out.Operand === 'distinct_hosts' || out.Operand === 'distinct_property') throw new HostVolumeInvalidError(`${f}.Operand`, `"${out.Operand}" does not apply to a volume`);
    return out;
  });
}

function admitCapabilities(raw: unknown): HostVolumeCapability[] {
  // Nomad's default when none is given: a file system one node writes.
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return [{ AttachmentMode: 'file-system', AccessMode: 'single-node-writer' }];
  if (!Array.isArray(raw)) throw new HostVolumeInvalidError('Volume.RequestedCapabilities', 'must be a list');
  return raw.map((c, i) => {
    const f = `Volume.RequestedCapabilities[${i}]`;
    if (!isObj(c)) throw new HostVolumeInvalidError(f, 'must be an object');
    const attachment = str(c, 'AttachmentMode', `${f}.AttachmentMode`);
    const access = str(c, 'AccessMode', `${f}.AccessMode`);
    if (!(HOST_VOLUME_ATTACHMENT_MODES as readonly string[]).includes(attachment)) throw new HostVolumeInvalidError(`${f}.AttachmentMode`, `invalid attachment mode ${JSON.stringify(attachment)}`);
    if (!(HOST_VOLUME_ACCESS_MODES as readonly string[]).includes(access)) throw new HostVolumeInvalidError(`${f}.AccessMode`, `invalid access mode ${JSON.stringify(access)}`);
    return { AttachmentMode: attachment, AccessMode: access };
  });
}

function admitParameters(raw: unknown): Record<string, string> | null {
  if (raw === undefined || raw === null) return null;
  if (!isObj(raw)) throw new HostVolumeInvalidError('Volume.Parameters', 'must be a map of strings');
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(raw)) {
    if (typeof val !== 'string') throw new HostVolumeInvalidError(`Volume.Parameters.${k}`, 'must be a string');
    out[k] = val;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** The mkdir plugin's parameters, checked: permission bits only, numeric owner. */
export interface MkdirParameters {
  mode: number;
  uid?: number;
  gid?: number;
}

/** The mode of a directory the mkdir plugin makes when none is asked (Nomad's 0700). */
export const MKDIR_DEFAULT_MODE = 0o700;

/**
 * The mkdir plugin's `parameters` (`mode` in octal, `uid`, `gid` as decimal IDs), as both the
 * server (at create) and the client (before it acts) check them. A mode may carry permission
 * bits only (at most 0777: no setuid, setgid or sticky bit); other parameter names are refused.
 */
export function mkdirParameters(params: Readonly<Record<string, string>> | null | undefined): MkdirParameters {
  const out: MkdirParameters = { mode: MKDIR_DEFAULT_MODE };
  for (const [k, v] of Object.entries(params ?? {})) {
    const f = `Volume.Parameters.${k}`;
    if (k === 'mode') {
      if (!/^0?[0-7]{3}$/.test(v)) throw new HostVolumeInvalidError(f, `invalid mode ${JSON.stringify(v)}: an octal permission mode from 000 to 0777`);
      out.mode = parseInt(v, 8);
    } else if (k === 'uid' || k === 'gid') {
      if (!/^\d{1,10}$/.test(v) || Number(v) > 0xfffffffe) throw new HostVolumeInvalidError(f, `invalid ${k} ${JSON.stringify(v)}: a numeric ID`);
      out[k] = Number(v);
    } else {
      throw new HostVolumeInvalidError(f, 'the mkdir plugin takes mode, uid and gid only');
    }
  }
  return out;
}
