/**
 * The dynamic host volume endpoint (Nomad's HostVolume.Create, Register, Delete). The server
 * decides, the node acts:
 *
 *   create ──▶ admit, place on a node ──▶ volume "pending" in the log ──▶ the node's client
 *   (watching its volumes) runs the plugin ──▶ reports HostPath ──▶ its fingerprint makes it
 *   "ready" (host-volume-fsm.ts)
 *   delete ──▶ refused while an allocation claims it ──▶ marked DeleteRequested ──▶ the node
 *   removes it ──▶ reports ──▶ the volume leaves the log
 *
 * Create, register and delete wait (up to a bound) for the node's report, so that, as with
 * Nomad's synchronous RPC to the client, an answer means the node did it — or says it failed.
 * A node never reached leaves the request in the log for when it comes back. Waiters live on
 * the leader, where every write and every client report is answered.
 */
import { randomUUID } from 'node:crypto';
import { isTerminalClientStatus, type Allocation } from '../../structs/alloc.js';
import {
  admitHostVolume,
  HostVolumeInvalidError,
  HostVolumeState,
  mkdirParameters,
  MKDIR_PLUGIN_ID,
  pluginVersionAttribute,
  VOLUME_ID,
  type HostVolume,
  type HostVolumeRequest,
} from '../../structs/dynamic-host-volume.js';
import { hostVolumeRequests, hostVolumeSource } from '../../structs/host-volume.js';
import type { Node } from '../../structs/index.js';
import { nodeMeetsConstraint, constraintString } from '../../scheduler/constraint-check.js';
import { nodeIsReady } from '../../scheduler/feasibility.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { ServerError } from '../server-error.js';
import { authenticateNode } from './node-endpoint.js';
import type { EndpointContext } from './endpoint-context.js';
import type { StateReader } from '../state/state-reader.js';

/** How long create, register and delete wait for the node's report. */
export const HOST_VOLUME_WAIT_MS = 30_000;

/**
 * The allocations claiming a volume, as Nomad counts them: not client-terminal, on the volume's
 * node, in a group whose host volume request names it (per_alloc: with the allocation's index).
 */
export function hostVolumeClaims(state: StateReader, vol: HostVolume): Allocation[] {
  return state.allocsByNode(vol.NodeID).filter((a) => {
    if (isTerminalClientStatus(a.ClientStatus)) return false;
    const group = a.Job?.TaskGroups.find((g) => g.Name === a.TaskGroup);
    return hostVolumeRequests(group?.Volumes).some((req) => hostVolumeSource(req, a.Name) === vol.Name);
  });
}

/** What a client reports after acting on one of its volumes. */
export interface HostVolumeClientReport {
  ID: string;
  Op: 'create' | 'delete';
  /** On a create: where the volume is, and its size (0 when the plugin does not say). */
  HostPath?: string;
  CapacityBytes?: number;
  /** Set when the plugin (or the client's checks) failed. */
  Error?: string;
}

/** The answer of a write: the volume (none for a delete) and the index it reflects. */
export interface HostVolumeWriteResult {
  volume?: HostVolume;
  index: number;
}

interface Waiter {
  op: 'create' | 'delete';
  settle: (err: Error | null) => void;
}

export class HostVolumeEndpoint {
  private readonly waiters = new Map<string, Waiter>();
  /** The version before an update (create or register of an existing ID), restored if the node fails it. */
  private readonly updating = new Map<string, HostVolume>();

  constructor(
    private readonly ctx: EndpointContext,
    private readonly waitMs = HOST_VOLUME_WAIT_MS,
  ) {}

  /** Creates (or, with the ID of an existing volume, updates) a volume with a plugin on a node. */
  async create(body: unknown, namespace: string): Promise<HostVolumeWriteResult> {
    const req = admitHostVolume(body, 'create', namespace);
    if (req.PluginID === MKDIR_PLUGIN_ID) mkdirParameters(req.Parameters);
    this.requireNamespace(req.Namespace);
    const prev = req.ID ? this.existing(req) : undefined;
    const node = prev ? this.requireNode(prev.NodeID) : this.place(req);
    const vol = this.newVolume(req, node, prev, HostVolumeState.Pending);
    if (prev) this.updating.set(prev.ID, prev);
    return this.writeAndWait(vol, 'create');
  }

  /** Registers an existing path on a node (no plugin runs); the node checks the path and fingerprints it. */
  async register(body: unknown, namespace: string): Promise<HostVolumeWriteResult> {
    const req = admitHostVolume(body, 'register', namespace);
    this.requireNamespace(req.Namespace);
    const prev = req.ID ? this.existing(req) : undefined;
    const node = this.requireNode(req.NodeID);
    const problem = this.nodeProblem(node, req, prev?.ID, false);
    if (problem) throw new CaravanError('HOST_VOLUME_NO_NODE', { reason: `node ${node.ID}: ${problem}` });
    if (prev && prev.HostPath === req.HostPath) {
      // The same path again: nothing for the node to check; the other fields are updated.
      const index = await this.ctx.apply({ Type: 'HostVolumeUpsert', Volumes: [{ ...this.newVolume(req, node, prev, prev.State), HostPath: prev.HostPath, CapacityBytes: prev.CapacityBytes }], Now: this.ctx.nowNanos() });
      return { volume: this.ctx.store.hostVolumeById(prev.ID)!, index };
    }
    const vol = this.newVolume(req, node, prev, HostVolumeState.Pending);
    if (prev) this.updating.set(prev.ID, prev);
    return this.writeAndWait(vol, 'create');
  }

  /**
   * Deletes a volume: refused while a non-terminal allocation claims it (as Nomad); otherwise
   * its node removes it (the plugin's delete; a registered volume is only forgotten) and it
   * leaves the state. A volume whose node is gone from the cluster is removed at once.
   */
  async delete(id: string, namespace: string): Promise<{ index: number }> {
    const vol = this.ctx.store.hostVolumeById(id);
    if (!vol || vol.Namespace !== namespace) throw new CaravanError('HOST_VOLUME_NOT_FOUND', {});
    const claims = hostVolumeClaims(this.ctx.store, vol);
    if (claims.length > 0) throw new CaravanError('HOST_VOLUME_IN_USE', { id, allocs: claims.map((a) => a.ID).join(', ') });
    if (!this.ctx.store.nodeById(vol.NodeID)) {
      return { index: await this.ctx.apply({ Type: 'HostVolumeDelete', IDs: [id], Now: this.ctx.nowNanos() }) };
    }
    const res = await this.writeAndWait({ ...vol, DeleteRequested: true }, 'delete');
    return { index: res.index };
  }

  /**
   * A client's report of what it did with one of its node's volumes (`secretId`: that node's
   * SecretID). A create makes the volume's HostPath known (its fingerprint then makes it ready)
   * or, failed, removes it; a delete removes it or, failed, withdraws the request.
   */
  async reportFromClient(raw: unknown, secretId: string): Promise<{ index: number }> {
    const r = admitReport(raw);
    const vol = this.ctx.store.hostVolumeById(r.ID);
    if (!vol) return { index: this.ctx.store.latestIndex() };
    const node = this.ctx.store.nodeById(vol.NodeID);
    if (!node) throw new ServerError('NODE_SECRET_MISMATCH', {});
    authenticateNode(node, secretId);
    const now = this.ctx.nowNanos();
    let index: number;
    let failure: Error | null = null;
    if (r.Op === 'create') {
      const before = this.updating.get(vol.ID);
      this.updating.delete(vol.ID);
      if (r.Error !== undefined) {
        failure = new CaravanError('HOST_VOLUME_PLUGIN_FAILED', { reason: `node ${vol.NodeID} could not create volume ${vol.ID}: ${r.Error}` });
        // (A version the node never made, with no path, is not restored: the node would only try again.)
        const kept = before && before.HostPath !== '' ? before : volumeAsFingerprinted(vol, node);
        // A failed update leaves the volume as it was: its node still holds the directory (and
        // its data), which forgetting the volume would leave behind with nothing to delete it.
        if (kept) index = await this.ctx.apply({ Type: 'HostVolumeUpsert', Volumes: [kept], Now: now });
        else index = await this.ctx.apply({ Type: 'HostVolumeDelete', IDs: [vol.ID], Now: now });
      } else {
        const updated: HostVolume = { ...vol, HostPath: r.HostPath ?? vol.HostPath, CapacityBytes: r.CapacityBytes ?? vol.CapacityBytes };
        index = await this.ctx.apply({ Type: 'HostVolumeUpsert', Volumes: [updated], Now: now });
      }
    } else if (r.Error !== undefined) {
      failure = new CaravanError('HOST_VOLUME_PLUGIN_FAILED', { reason: `node ${vol.NodeID} could not delete volume ${vol.ID}: ${r.Error}` });
      const { DeleteRequested: _withdrawn, ...kept } = vol;
      index = await this.ctx.apply({ Type: 'HostVolumeUpsert', Volumes: [kept], Now: now });
    } else {
      index = await this.ctx.apply({ Type: 'HostVolumeDelete', IDs: [vol.ID], Now: now });
    }
    const w = this.waiters.get(vol.ID);
    if (w && w.op === r.Op) {
      this.waiters.delete(vol.ID);
      w.settle(failure);
    }
    return { index };
  }

  private async writeAndWait(vol: HostVolume, op: 'create' | 'delete'): Promise<HostVolumeWriteResult> {
    const done = this.wait(vol.ID, op);
    let index: number;
    try {
      index = await this.ctx.apply({ Type: 'HostVolumeUpsert', Volumes: [vol], Now: this.ctx.nowNanos() });
    } catch (err) {
      this.waiters.get(vol.ID)?.settle(null);
      this.waiters.delete(vol.ID);
      throw err;
    }
    await done;
    const after = this.ctx.store.hostVolumeById(vol.ID);
    return { ...(after ? { volume: after } : {}), index: Math.max(index, this.ctx.store.latestIndex()) };
  }

  /** Resolves when the node reports on `id` (rejects with its failure), or rejects after the bound. */
  private wait(id: string, op: 'create' | 'delete'): Promise<void> {
    // A newer request for the same volume replaces an older one's waiter; that one is answered now.
    this.waiters.get(id)?.settle(null);
    return new Promise<void>((resolve, reject) => {
      const timer = this.ctx.clock.setTimer(this.waitMs, () => {
        if (this.waiters.get(id) !== waiter) return;
        this.waiters.delete(id);
        const vol = this.ctx.store.hostVolumeById(id);
        reject(new CaravanError('HOST_VOLUME_TIMEOUT', { node: vol?.NodeID ?? '?', op, id, seconds: Math.round(this.waitMs / 1000) }));
      });
      const waiter: Waiter = {
        op,
        settle: (err) => {
          timer.cancel();
          if (err) reject(err);
          else resolve();
        },
      };
      this.waiters.set(id, waiter);
    });
  }

  private newVolume(req: HostVolumeRequest, node: Node, prev: HostVolume | undefined, state: HostVolumeState): HostVolume {
    return {
      ...req,
      ID: prev?.ID ?? randomUUID(),
      NodeID: node.ID,
      NodePool: node.NodePool || 'default',
      CapacityBytes: prev?.CapacityBytes ?? 0,
      // A create runs the plugin again (it is idempotent) and reports the path anew.
      HostPath: req.HostPath,
      State: state,
      CreateIndex: prev?.CreateIndex ?? 0,
      CreateTime: prev?.CreateTime ?? 0,
      ModifyIndex: 0,
      ModifyTime: 0,
    };
  }

  /** The volume an update names: same namespace, name and node; 404 when there is none. */
  private existing(req: HostVolumeRequest): HostVolume {
    const prev = this.ctx.store.hostVolumeById(req.ID);
    if (!prev || prev.Namespace !== req.Namespace) throw new CaravanError('HOST_VOLUME_NOT_FOUND', {});
    if (prev.Name !== req.Name) throw new HostVolumeInvalidError('Volume.Name', `cannot be changed (volume ${prev.ID} is "${prev.Name}")`);
    if (req.NodeID !== '' && req.NodeID !== prev.NodeID) throw new HostVolumeInvalidError('Volume.NodeID', `cannot be changed (volume ${prev.ID} is on node ${prev.NodeID})`);
    if (prev.DeleteRequested) throw new HostVolumeInvalidError('Volume.ID', `volume ${prev.ID} is being deleted`);
    return prev;
  }

  /** The node a new volume goes to: the named one if it fits, else a random one of those that do. */
  private place(req: HostVolumeRequest): Node {
    if (req.NodeID !== '') {
      const node = this.requireNode(req.NodeID);
      const problem = this.nodeProblem(node, req, undefined, true);
      if (problem) throw new CaravanError('HOST_VOLUME_NO_NODE', { reason: `node ${node.ID}: ${problem}` });
      return node;
    }
    const fits = this.ctx.store.nodes().filter((n) => this.nodeProblem(n, req, undefined, true) === undefined);
    if (fits.length === 0) throw new CaravanError('HOST_VOLUME_NO_NODE', { reason: 'no node meets constraints' });
    return fits[Math.floor(this.ctx.random() * fits.length)]!;
  }

  /** Why `node` cannot hold the volume (undefined: it can). */
  private nodeProblem(node: Node, req: HostVolumeRequest, ownId: string | undefined, needPlugin: boolean): string | undefined {
    if (needPlugin && !nodeIsReady(node)) return 'is not ready and eligible';
    const pool = req.NodePool || '';
    if (pool !== '' && pool !== 'all' && pool !== (node.NodePool || 'default')) return `is not in node pool "${pool}"`;
    for (const c of req.Constraints ?? []) if (!nodeMeetsConstraint(c, node)) return `does not meet constraint ${constraintString(c)}`;
    if (needPlugin && node.Attributes[pluginVersionAttribute(req.PluginID)] === undefined) return `has no host volume plugin "${req.PluginID}"`;
    const same = node.HostVolumes?.[req.Name];
    if (same && same.ID !== ownId) return same.ID ? `already has a volume named "${req.Name}"` : `has a static host volume named "${req.Name}"`;
    if (this.ctx.store.hostVolumesByNode(node.ID).some((v) => v.Name === req.Name && v.ID !== ownId)) return `already has a volume named "${req.Name}"`;
    return undefined;
  }

  private requireNode(id: string): Node {
    const node = this.ctx.store.nodeById(id);
    if (!node) throw new CaravanError('HOST_VOLUME_NO_NODE', { reason: `node ${JSON.stringify(id)} not found` });
    return node;
  }

  private requireNamespace(ns: string): void {
    if (!this.ctx.store.namespaceByName(ns)) throw new HostVolumeInvalidError('Volume.Namespace', `namespace "${ns}" does not exist`);
  }
}

/** A client's report, shape-checked. */
function admitReport(raw: unknown): HostVolumeClientReport {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  if (typeof r['ID'] !== 'string' || !VOLUME_ID.test(r['ID'])) throw new HostVolumeInvalidError('Report.ID', 'must be a volume ID');
  if (r['Op'] !== 'create' && r['Op'] !== 'delete') throw new HostVolumeInvalidError('Report.Op', 'must be "create" or "delete"');
  const out: HostVolumeClientReport = { ID: r['ID'], Op: r['Op'] };
  if (r['Error'] !== undefined && r['Error'] !== null) out.Error = String(r['Error']).slice(0, 2000);
  if (typeof r['HostPath'] === 'string') {
    if (!r['HostPath'].startsWith('/')) throw new HostVolumeInvalidError('Report.HostPath', 'must be absolute');
    out.HostPath = r['HostPath'];
  }
  if (typeof r['CapacityBytes'] === 'number' && Number.isSafeInteger(r['CapacityBytes']) && r['CapacityBytes'] >= 0) out.CapacityBytes = r['CapacityBytes'];
  return out;
}

/**
 * The volume as its node still offers it (an update that failed after a leader change, when
 * the version before it is not known here): ready at the path the node fingerprints, or
 * undefined when the node does not offer it (a new volume the plugin failed to make).
 */
function volumeAsFingerprinted(vol: HostVolume, node: Node): HostVolume | undefined {
  const offered = Object.values(node.HostVolumes ?? {}).find((h) => h.ID === vol.ID);
  return offered ? { ...vol, HostPath: offered.Path, State: HostVolumeState.Ready } : undefined;
}
