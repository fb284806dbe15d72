/**
 * Fingerprinting the client's configured host volumes into Nomad's Node.HostVolumes. Each path is
 * resolved once, here, to the real path it names (a symlink in the configured path is the
 * operator's own choice); tasks are only ever given these resolved paths, so a volume never
 * exposes a host path the configuration did not name.
 */
import { realpathSync, statSync } from 'node:fs';
import type { ClientHostVolumeConfig } from '../../structs/host-volume.js';
import { ClientError, ClientErrorCode, errorMessage } from '../client-error.js';

/** A configured host volume: absolute path and read-only flag. */
export interface HostVolumeSetting {
  path: string;
  readOnly: boolean;
}

/**
 * The node's HostVolumes for the configured volumes. Throws CLIENT_HOST_VOLUME_INVALID naming the
 * volume when its path is not absolute or does not exist (as Nomad's client refuses to start).
 */
export function fingerprintHostVolumes(settings: Readonly<Record<string, HostVolumeSetting>> | undefined): Record<string, ClientHostVolumeConfig> {
  const out: Record<string, ClientHostVolumeConfig> = {};
  for (const [name, s] of Object.entries(settings ?? {})) {
    if (!s.path.startsWith('/')) throw new ClientError(ClientErrorCode.HostVolumeInvalid, `host_volume "${name}": path must be absolute, got ${JSON.stringify(s.path)}`);
    let real: string;
    try {
      real = realpathSync(s.path);
      statSync(real);
    } catch (err) {
      throw new ClientError(ClientErrorCode.HostVolumeInvalid, `host_volume "${name}": path ${JSON.stringify(s.path)} cannot be used: ${errorMessage(err)}`, { cause: err });
    }
    out[name] = { Name: name, Path: real, ReadOnly: s.readOnly };
  }
  return out;
}
