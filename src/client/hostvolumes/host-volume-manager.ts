/**
 * The client's side of dynamic host volumes (Nomad's hostvolumemanager): it reads the
 * volumes the servers placed on this node, runs the plugin for a new one (or checks the path of
 * a registered one), keeps what it made in the client state DB so the node fingerprints it
 * after a restart, and reports back; a volume marked for deletion is removed and forgotten.
 *
 *   index moved ─▶ fetch ─▶ pending, no HostPath ─▶ plugin create ─▶ record ─▶ node re-registered
 *                                                                 with it ─▶ report {HostPath}
 *                         ─▶ DeleteRequested ─────▶ plugin delete ─▶ forget ─▶ node re-registered
 *                                                                 without it ─▶ report
 *
 * The manager holds no blocking query of its own: the client's allocation watch carries the
 * index of the node's volumes (noteIndex), and the volumes are fetched, without blocking, once
 * at start and whenever that index moves, so a client holds one request to the servers, not two
 * (10,000 nodes would otherwise hold 20,000 sockets). Each version of a volume (its ModifyIndex)
 * is acted on once; a failed fetch or report is retried after a second.
 */
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { sep } from 'node:path';
import type { Logger } from 'pino';
import { MKDIR_PLUGIN_ID, MKDIR_PLUGIN_VERSION, pluginVersionAttribute, type HostVolume } from '../../structs/dynamic-host-volume.js';
import type { ClientHostVolumeConfig } from '../../structs/host-volume.js';
import type { Clock } from '../../time/clock.js';
import { ClientError, ClientErrorCode, errorMessage } from '../client-error.js';
import type { HostVolumeReport, ServerConnection } from '../server-connection.js';
import type { ClientStateStore } from '../state/state-db.js';
import { ExternalPlugin, findExternalPlugin, listExternalPlugins } from './external-plugin.js';
import type { HostVolumePlugin } from './host-volume-plugin.js';
import { MkdirPlugin } from './mkdir-plugin.js';

/** The client state DB key of the volumes this node holds. */
const STATE_KEY = 'dynamic_host_volumes';
const RETRY_MS = 1_000;

/** A volume this node holds, as kept in its state DB. */
export interface HeldHostVolume {
  ID: string;
  Name: string;
  HostPath: string;
  /** "" for a registered volume (nothing to run on delete). */
  PluginID: string;
  /** The volume's namespace: only its jobs are placed on it. */
  Namespace: string;
}

export interface HostVolumeManagerOptions {
  /** `host_volumes_dir`: where plugins make volumes (created 0700 if missing). */
  volumesDir: string;
  /** `host_volume_plugin_dir`: where other plugins are found by name. */
  pluginDir: string;
  store: ClientStateStore;
  connection: ServerConnection;
  clock: Clock;
  logger: Logger;
  /** Called when the volumes held changed; resolves once the node is registered with them. */
  onChange: (volumes: Record<string, ClientHostVolumeConfig>) => Promise<void>;
}

export class HostVolumeManager {
  private readonly held = new Map<string, HeldHostVolume>();
  /** The ModifyIndex of each volume version already acted on and reported. */
  private readonly done = new Map<string, number>();
  private readonly root: string;
  private readonly pluginDir: string;
  private readonly mkdir: MkdirPlugin;
  /** The latest index of the node's volumes the allocation watch reported; undefined until it answers. */
  private heard: number | undefined;
  /** The index whose volumes were fetched and acted on. */
  private applied: number | undefined;
  /** Wakes run() when the index moved. */
  private wake: (() => void) | undefined;

  constructor(private readonly opts: HostVolumeManagerOptions) {
    mkdirSync(opts.volumesDir, { recursive: true, mode: 0o700 });
    this.root = realpathSync(opts.volumesDir);
    mkdirSync(opts.pluginDir, { recursive: true, mode: 0o700 });
    this.pluginDir = realpathSync(opts.pluginDir);
    this.mkdir = new MkdirPlugin(this.root);
    for (const v of loadHeld(opts.store)) this.held.set(v.ID, v);
  }

  /** The node's HostVolumes entries for the volumes held (by name, with their IDs). */
  fingerprint(): Record<string, ClientHostVolumeConfig> {
    const out: Record<string, ClientHostVolumeConfig> = {};
    for (const v of this.held.values()) out[v.Name] = { Name: v.Name, Path: v.HostPath, ReadOnly: false, ID: v.ID, Namespace: v.Namespace };
    return out;
  }

  /** The `plugins.host_volume.<id>.version` node attributes: mkdir, and each plugin in the plugin dir. */
  pluginAttributes(): Record<string, string> {
    const out: Record<string, string> = { [pluginVersionAttribute(MKDIR_PLUGIN_ID)]: MKDIR_PLUGIN_VERSION };
    for (const id of listExternalPlugins(this.pluginDir)) if (id !== MKDIR_PLUGIN_ID) out[pluginVersionAttribute(id)] = 'external';
    return out;
  }

  /**
   * The index of the node's volumes from an answer of the allocation watch. Any change (back
   * too: a server without our history) makes run() fetch the volumes; the first answer after
   * start always does.
   */
  noteIndex(index: number): void {
    if (index === this.heard) return;
    this.heard = index;
    this.wake?.();
  }

  /** Fetches and acts on the node's volumes each time noteIndex reports a new index, until `signal` aborts. */
  async run(nodeId: () => string, signal: AbortSignal): Promise<void> {
    const fetchVolumes = this.opts.connection.fetchHostVolumes;
    if (!fetchVolumes) return;
    while (!signal.aborted) {
      const target = this.heard;
      if (target === undefined || target === this.applied) {
        await this.nextIndex(signal);
        continue;
      }
      try {
        // Read after the index was heard, so the list is at least as new as `target`.
        const volumes = await fetchVolumes.call(this.opts.connection, nodeId(), signal);
        if (signal.aborted) break;
        await this.apply(volumes);
        this.applied = target;
      } catch (err) {
        if (signal.aborted) break;
        this.opts.logger.warn({ err: errorMessage(err) }, 'reading host volumes failed; retrying');
        await this.opts.clock.sleep(RETRY_MS, signal).catch(() => undefined);
      }
    }
  }

  /** Resolves when noteIndex hears a new index or `signal` aborts. */
  private nextIndex(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Acts on each volume version not acted on yet, one after the other. */
  async apply(volumes: readonly HostVolume[]): Promise<void> {
    for (const v of volumes) {
      if (this.done.get(v.ID) === v.ModifyIndex) continue;
      let report: HostVolumeReport | undefined;
      if (v.DeleteRequested) report = await this.remove(v);
      // New (or updated: the server cleared its path), not held yet, or registered anew at another path.
      else if (v.HostPath === '' || this.held.get(v.ID)?.HostPath !== v.HostPath) report = await this.create(v);
      if (report) await this.opts.connection.reportHostVolume?.(report);
      this.done.set(v.ID, v.ModifyIndex);
    }
  }

  private async create(v: HostVolume): Promise<HostVolumeReport> {
    try {
      let path: string;
      let bytes = 0;
      if (v.PluginID === '') path = this.checkRegisteredPath(v.HostPath || '');
      else {
        const r = await this.plugin(v.PluginID).create({
          ID: v.ID,
          Name: v.Name,
          NodeID: v.NodeID,
          RequestedCapacityMinBytes: v.RequestedCapacityMinBytes,
          RequestedCapacityMaxBytes: v.RequestedCapacityMaxBytes,
          Parameters: v.Parameters,
        });
        path = r.path;
        bytes = r.bytes;
      }
      await this.hold({ ID: v.ID, Name: v.Name, HostPath: path, PluginID: v.PluginID, Namespace: v.Namespace });
      this.opts.logger.info({ volume: v.ID, name: v.Name, path }, 'host volume created');
      return { ID: v.ID, Op: 'create', HostPath: path, CapacityBytes: bytes };
    } catch (err) {
      this.opts.logger.warn({ volume: v.ID, err: errorMessage(err) }, 'host volume create failed');
      await this.undoFailedCreate(v);
      return { ID: v.ID, Op: 'create', Error: errorMessage(err) };
    }
  }

  /**
   * After a plugin failed to make a volume this node does not hold, runs the plugin's delete so
   * what it made part-way (the mkdir plugin's directory, made before its chmod or chown failed)
   * is not left behind: the server forgets the volume, and nothing else would remove it. A
   * volume the node holds (a failed update) keeps its directory and data.
   */
  private async undoFailedCreate(v: HostVolume): Promise<void> {
    if (v.PluginID === '' || this.held.has(v.ID)) return;
    try {
      await this.plugin(v.PluginID).delete({ ID: v.ID, NodeID: v.NodeID, Parameters: v.Parameters });
    } catch (err) {
      this.opts.logger.warn({ volume: v.ID, err: errorMessage(err) }, 'removing a host volume whose create failed failed too');
    }
  }

  private async remove(v: HostVolume): Promise<HostVolumeReport> {
    try {
      const held = this.held.get(v.ID);
      const pluginId = held ? held.PluginID : v.PluginID;
      if (pluginId !== '') await this.plugin(pluginId).delete({ ID: v.ID, NodeID: v.NodeID, Parameters: v.Parameters });
      if (held) {
        this.held.delete(v.ID);
        saveHeld(this.opts.store, [...this.held.values()]);
        await this.opts.onChange(this.fingerprint());
      }
      this.opts.logger.info({ volume: v.ID, name: v.Name }, 'host volume deleted');
      return { ID: v.ID, Op: 'delete' };
    } catch (err) {
      this.opts.logger.warn({ volume: v.ID, err: errorMessage(err) }, 'host volume delete failed');
      return { ID: v.ID, Op: 'delete', Error: errorMessage(err) };
    }
  }

  private async hold(v: HeldHostVolume): Promise<void> {
    this.held.set(v.ID, v);
    saveHeld(this.opts.store, [...this.held.values()]);
    await this.opts.onChange(this.fingerprint());
  }

  private plugin(id: string): HostVolumePlugin {
    if (id === MKDIR_PLUGIN_ID) return this.mkdir;
    const exe = findExternalPlugin(this.pluginDir, id);
    if (!exe) throw new ClientError(ClientErrorCode.HostVolumeInvalid, `no host volume plugin "${id}" in ${this.pluginDir}`);
    return new ExternalPlugin(id, exe, this.root);
  }

  /**
   * A registered volume's path, resolved: it must be a directory inside host_volumes_dir (so a
   * registration, like a plugin, can only offer what the operator set aside for volumes).
   */
  private checkRegisteredPath(hostPath: string): string {
    let real: string;
    try {
      real = realpathSync(hostPath);
    } catch (err) {
      throw new ClientError(ClientErrorCode.HostVolumeInvalid, `registered path ${JSON.stringify(hostPath)} cannot be used: ${errorMessage(err)}`, { cause: err });
    }
    if (!real.startsWith(this.root + sep)) throw new ClientError(ClientErrorCode.HostVolumeInvalid, `registered path ${JSON.stringify(hostPath)} is not inside host_volumes_dir ${this.root}`);
    if (!statSync(real).isDirectory()) throw new ClientError(ClientErrorCode.HostVolumeInvalid, `registered path ${JSON.stringify(hostPath)} is not a directory`);
    return real;
  }
}

function loadHeld(store: ClientStateStore): HeldHostVolume[] {
  const raw = store.getMeta(STATE_KEY);
  if (!raw) return [];
  try {
    const list = JSON.parse(raw) as unknown;
    return Array.isArray(list) ? (list as HeldHostVolume[]).filter((v) => v && typeof v.ID === 'string' && typeof v.Name === 'string' && typeof v.HostPath === 'string') : [];
  } catch {
    return [];
  }
}

function saveHeld(store: ClientStateStore, volumes: HeldHostVolume[]): void {
  store.putMeta(STATE_KEY, JSON.stringify(volumes));
}
