/**
 * The built-in `mkdir` host volume plugin: a directory `<host_volumes_dir>/<volume ID>`, with
 * the `mode`, `uid` and `gid` its parameters ask for (permission bits only). The directory is
 * opened without following symlinks before its mode and owner are set, and a delete never
 * follows a symlink (a task may leave any inside the volume): only the volume's own tree goes.
 */
import { closeSync, constants, fchmodSync, fchownSync, fstatSync, lstatSync, mkdirSync, openSync, rmSync, unlinkSync } from 'node:fs';
import { mkdirParameters, MKDIR_PLUGIN_ID } from '../../structs/dynamic-host-volume.js';
import { ClientError, ClientErrorCode, errorMessage } from '../client-error.js';
import { volumePath, type HostVolumePlugin, type PluginCreateRequest, type PluginCreateResult } from './host-volume-plugin.js';

export class MkdirPlugin implements HostVolumePlugin {
  readonly id = MKDIR_PLUGIN_ID;

  /** `root`: the client's host_volumes_dir, already resolved to its real path. */
  constructor(private readonly root: string) {}

  async create(req: PluginCreateRequest): Promise<PluginCreateResult> {
    const params = mkdirParameters(req.Parameters);
    const path = volumePath(this.root, req.ID);
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw pluginError('create', req.ID, err);
    }
    let fd: number;
    try {
      // O_NOFOLLOW: a symlink in the volume's place is refused, never followed to chmod its target.
      fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (err) {
      throw pluginError('create', req.ID, err);
    }
    try {
      if (!fstatSync(fd).isDirectory()) throw new Error(`${path} is not a directory`);
      fchmodSync(fd, params.mode);
      if (params.uid !== undefined || params.gid !== undefined) fchownSync(fd, params.uid ?? -1, params.gid ?? -1);
    } catch (err) {
      throw pluginError('create', req.ID, err);
    } finally {
      closeSync(fd);
    }
    return { path, bytes: 0 };
  }

  async delete(req: Pick<PluginCreateRequest, 'ID'>): Promise<void> {
    const path = volumePath(this.root, req.ID);
    try {
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (!st) return;
      // A symlink in the volume's place goes itself; its target is not ours.
      if (!st.isDirectory()) unlinkSync(path);
      // rm removes symlinks inside the tree as links, without following them.
      else rmSync(path, { recursive: true, force: true });
    } catch (err) {
      throw pluginError('delete', req.ID, err);
    }
  }
}

function pluginError(op: string, id: string, err: unknown): ClientError {
  return new ClientError(ClientErrorCode.HostVolumeInvalid, `mkdir plugin: ${op} volume ${id}: ${errorMessage(err)}`, { cause: err });
}
