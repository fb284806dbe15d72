/**
 * What a host volume plugin does for the client (Nomad's HostVolumePlugin): make a volume's
 * directory and say where it is, remove it again. Two kinds: the built-in `mkdir`
 * (mkdir-plugin.ts) and executables in the client's `host_volume_plugin_dir`
 * (external-plugin.ts). Every path a plugin is handed is `<host_volumes_dir>/<volume ID>`, with
 * the ID checked to be a UUID first, so no volume name, ID or parameter can name another place.
 */
import { join } from 'node:path';
import { HostVolumeInvalidError, VOLUME_ID } from '../../structs/dynamic-host-volume.js';

/** A create request as a plugin sees it. */
export interface PluginCreateRequest {
  ID: string;
  Name: string;
  NodeID: string;
  RequestedCapacityMinBytes: number;
  RequestedCapacityMaxBytes: number;
  Parameters: Record<string, string> | null;
}

/** What a plugin made: where, and how big (0 when it does not say). */
export interface PluginCreateResult {
  path: string;
  bytes: number;
}

export interface HostVolumePlugin {
  readonly id: string;
  /** Makes the volume (idempotent: an existing volume of that ID is fine). */
  create(req: PluginCreateRequest): Promise<PluginCreateResult>;
  /** Removes the volume (idempotent: a missing one is fine). */
  delete(req: Pick<PluginCreateRequest, 'ID' | 'NodeID' | 'Parameters'>): Promise<void>;
}

/** The one path a volume's plugin may use: `<root>/<id>`, for a UUID `id` only. */
export function volumePath(root: string, id: string): string {
  if (!VOLUME_ID.test(id)) throw new HostVolumeInvalidError('Volume.ID', `invalid volume ID ${JSON.stringify(id)}`);
  return join(root, id);
}
