/**
 * Host volume plugins other than `mkdir`: executables the operator put in the client's
 * `host_volume_plugin_dir`, found by plain name only (a `plugin_id` with a `/`, `..` or any
 * character outside `[A-Za-z0-9_-]` is refused before any lookup), and only when the file's real
 * path is in that directory. Run as Nomad runs them: `<plugin> create|delete <host path>` with
 * the environment OPERATION, HOST_PATH, NODE_ID, VOLUME_NAME, CAPACITY_MIN_BYTES,
 * CAPACITY_MAX_BYTES and PARAMETERS (JSON); a create prints `{"path": …, "bytes": …}`.
 */
import { execFile } from 'node:child_process';
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PLUGIN_ID } from '../../structs/dynamic-host-volume.js';
import { ClientError, ClientErrorCode, errorMessage } from '../client-error.js';
import { volumePath, type HostVolumePlugin, type PluginCreateRequest, type PluginCreateResult } from './host-volume-plugin.js';

/** How long a plugin may run. */
const PLUGIN_TIMEOUT_MS = 60_000;

/**
 * The executable of plugin `id` in `pluginDir` (already a real path), or undefined when there
 * is none there. Throws for an ID that is not a plain name.
 */
export function findExternalPlugin(pluginDir: string, id: string): string | undefined {
  if (!PLUGIN_ID.test(id)) throw new ClientError(ClientErrorCode.HostVolumeInvalid, `host volume plugin ${JSON.stringify(id)}: a plugin is named by a plain file name in host_volume_plugin_dir`);
  let real: string;
  try {
    real = realpathSync(join(pluginDir, id));
  } catch {
    return undefined;
  }
  if (dirname(real) !== pluginDir) return undefined;
  const st = statSync(real);
  return st.isFile() && (st.mode & 0o111) !== 0 ? real : undefined;
}

/** The plugins in `pluginDir` (by name), for the node's `plugins.host_volume.<id>.version` attributes. */
export function listExternalPlugins(pluginDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(pluginDir);
  } catch {
    return [];
  }
  return names.filter((n) => PLUGIN_ID.test(n) && findExternalPlugin(pluginDir, n) !== undefined).sort();
}

export class ExternalPlugin implements HostVolumePlugin {
  constructor(
    readonly id: string,
    private readonly executable: string,
    private readonly root: string,
  ) {}

  async create(req: PluginCreateRequest): Promise<PluginCreateResult> {
    const path = volumePath(this.root, req.ID);
    const stdout = await this.run('create', path, {
      NODE_ID: req.NodeID,
      VOLUME_NAME: req.Name,
      CAPACITY_MIN_BYTES: String(req.RequestedCapacityMinBytes),
      CAPACITY_MAX_BYTES: String(req.RequestedCapacityMaxBytes),
      PARAMETERS: JSON.stringify(req.Parameters ?? {}),
    });
    let out: unknown;
    try {
      out = JSON.parse(stdout);
    } catch {
      throw new ClientError(ClientErrorCode.HostVolumeInvalid, `host volume plugin "${this.id}": create printed no JSON`);
    }
    const o = (out && typeof out === 'object' ? out : {}) as { path?: unknown; bytes?: unknown };
    if (typeof o.path !== 'string' || !o.path.startsWith('/')) throw new ClientError(ClientErrorCode.HostVolumeInvalid, `host volume plugin "${this.id}": create must print an absolute "path"`);
    return { path: o.path, bytes: typeof o.bytes === 'number' && Number.isSafeInteger(o.bytes) && o.bytes >= 0 ? o.bytes : 0 };
  }

  async delete(req: Pick<PluginCreateRequest, 'ID' | 'NodeID' | 'Parameters'>): Promise<void> {
    await this.run('delete', volumePath(this.root, req.ID), { NODE_ID: req.NodeID, PARAMETERS: JSON.stringify(req.Parameters ?? {}) });
  }

  private run(op: 'create' | 'delete', path: string, env: Record<string, string>): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        this.executable,
        [op, path],
        { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', OPERATION: op, HOST_PATH: path, ...env }, timeout: PLUGIN_TIMEOUT_MS, maxBuffer: 1 << 20 },
        (err, stdout, stderr) => {
          if (err) reject(new ClientError(ClientErrorCode.HostVolumeInvalid, `host volume plugin "${this.id}": ${op} failed: ${errorMessage(err)}${stderr ? `: ${String(stderr).trim().slice(0, 500)}` : ''}`, { cause: err }));
          else resolve(String(stdout));
        },
      );
    });
  }
}
