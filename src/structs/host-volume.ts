/**
 * Host volumes as Nomad models them: what a client offers (`client { host_volume "name" { path
 * read_only } }`, fingerprinted into Node.HostVolumes), what a group asks for (`volume "x" { type
 * = "host" source read_only per_alloc }`, TaskGroup.Volumes) and where a task wants it
 * (`volume_mount { volume destination read_only propagation_mode }`, Task.VolumeMounts).
 */
import type { HostVolume } from './dynamic-host-volume.js';

/** Nomad's volume types; Caravan runs only "host" ("csi" is parsed and refused at registration). */
export const VolumeType = { Host: 'host', Csi: 'csi' } as const;
export type VolumeType = (typeof VolumeType)[keyof typeof VolumeType];

/** A host volume a client offers (Nomad's ClientHostVolumeConfig). */
export interface ClientHostVolumeConfig {
  Name: string;
  /** The host directory (or file), absolute and resolved when the client fingerprints it. */
  Path: string;
  ReadOnly: boolean;
  /** A dynamic host volume's ID; "" for one named in the client's configuration. */
  ID?: string;
  /**
   * Caravan's: a dynamic host volume's namespace (Nomad looks it up from the volume's ID). Only
   * jobs of that namespace may use it; absent for a volume of the client's configuration.
   */
  Namespace?: string;
}

/** CSI mount options; kept for CSI volumes, refused on host volumes (Nomad's CSIMountOptions). */
export interface CsiMountOptions {
  FSType: string;
  MountFlags: string[] | null;
}

/** A group's `volume "name" { … }` (Nomad's VolumeRequest). */
export interface VolumeRequest {
  Name: string;
  Type: string;
  Source: string;
  ReadOnly: boolean;
  Sticky: boolean;
  AccessMode: string;
  AttachmentMode: string;
  MountOptions: CsiMountOptions | null;
  /** Each allocation uses `<source>[<index>]` (Nomad's AllocSuffix), so replicas keep their own data. */
  PerAlloc: boolean;
}

/** A task's `volume_mount { … }` (Nomad's VolumeMount). */
export interface VolumeMount {
  Volume: string;
  Destination: string;
  ReadOnly: boolean;
  PropagationMode: string;
  SELinuxLabel: string;
}

/** Nomad's propagation modes; "private" is the default. */
export const PROPAGATION_MODES = ['private', 'host-to-task', 'bidirectional'] as const;

/**
 * The `[N]` suffix of an allocation name ("web.cache[3]" → "[3]"), as Nomad's AllocSuffix: the
 * part a per_alloc volume's source gets. "" when the name has none.
 */
export function allocSuffix(allocName: string): string {
  const at = allocName.lastIndexOf('[');
  return at < 0 ? '' : allocName.slice(at);
}

/** The host volume name an allocation of the group uses for a request: the source, per_alloc suffixed. */
export function hostVolumeSource(req: Pick<VolumeRequest, 'Source' | 'PerAlloc'>, allocName: string): string {
  return req.PerAlloc ? req.Source + allocSuffix(allocName) : req.Source;
}

/** The group's host volume requests (CSI ones are another checker's business). */
export function hostVolumeRequests(volumes: Record<string, VolumeRequest> | null | undefined): VolumeRequest[] {
  return Object.values(volumes ?? {}).filter((v) => v.Type === VolumeType.Host);
}

/**
 * Whether a node offers every host volume the group asks for, as Nomad's HostVolumeChecker: each
 * source (per_alloc: suffixed with the allocation's index) must exist; a static volume that is
 * read-only only serves read-only requests; a dynamic volume only serves jobs of its namespace
 * and, when `volumeById` gives its record, must be ready with a capability the request fits
 * (hostVolumeCapabilityFits). `allocName` is needed only when a request is per_alloc. Claims by
 * other allocations (single-node-single-writer) are the placement's business, not this one's.
 */
export function nodeHasHostVolumes(
  offered: Record<string, ClientHostVolumeConfig> | null | undefined,
  requests: readonly VolumeRequest[],
  allocName = '',
  namespace?: string,
  volumeById?: (id: string) => HostVolume | undefined,
): boolean {
  for (const req of requests) {
    const vol = offered?.[hostVolumeSource(req, allocName)];
    if (!vol) return false;
    if (vol.ReadOnly && !req.ReadOnly) return false;
    if (!vol.ID) continue;
    // A dynamic volume serves jobs of its own namespace only, as Nomad's HostVolumeChecker.
    if (namespace !== undefined && vol.Namespace !== undefined && vol.Namespace !== namespace) return false;
    if (!volumeById) continue;
    const record = volumeById(vol.ID);
    if (!record || (namespace !== undefined && record.Namespace !== namespace)) return false;
    if (!hostVolumeCapabilityFits(record, req)) return false;
  }
  return true;
}

/**
 * The access mode a request to a dynamic host volume claims: its own, else single-node-reader-only
 * when read-only and single-node-writer otherwise (Nomad picks this default in the scheduler, as
 * only there is it known whether a volume is dynamic).
 */
export function hostVolumeRequestAccessMode(req: Pick<VolumeRequest, 'AccessMode' | 'ReadOnly'>): string {
  if (req.AccessMode) return req.AccessMode;
  return req.ReadOnly ? 'single-node-reader-only' : 'single-node-writer';
}

/**
 * Whether a dynamic host volume can serve a request, as Nomad's hostVolumeIsAvailable without
 * the claims: the volume is ready, one of its capabilities has the request's access and
 * attachment modes (defaults: see hostVolumeRequestAccessMode, and "file-system"), and a
 * reader-only claim is read-only while a single-node-writer one is not.
 */
export function hostVolumeCapabilityFits(vol: Pick<HostVolume, 'State' | 'RequestedCapabilities'>, req: Pick<VolumeRequest, 'AccessMode' | 'AttachmentMode' | 'ReadOnly'>): boolean {
  if (vol.State !== 'ready') return false;
  const access = hostVolumeRequestAccessMode(req);
  const attachment = req.AttachmentMode || 'file-system';
  if (!vol.RequestedCapabilities.some((c) => c.AccessMode === access && c.AttachmentMode === attachment)) return false;
  if (access === 'single-node-reader-only') return req.ReadOnly;
  if (access === 'single-node-writer') return !req.ReadOnly;
  return true;
}

/** A volume request as a draft may give it (any field missing or mistyped; validation names bad ones). */
type Loose<T> = { [K in keyof T]?: unknown };

/**
 * A group's volumes with Nomad's defaults (Name from the map key when missing, false flags, ""
 * strings). Mistyped values are kept as given for validation to name; null when there are none.
 */
export function canonicalizeVolumes(volumes: Readonly<Record<string, Loose<VolumeRequest> | null | undefined>> | null | undefined): Record<string, VolumeRequest> | null {
  if (!volumes || typeof volumes !== 'object' || Object.keys(volumes).length === 0) return null;
  const out: Record<string, VolumeRequest> = {};
  for (const [name, raw] of Object.entries(volumes)) {
    const v = (raw && typeof raw === 'object' ? raw : {}) as Loose<VolumeRequest>;
    out[name] = {
      Name: (v.Name ?? name) as string,
      Type: (v.Type ?? '') as string,
      Source: (v.Source ?? '') as string,
      ReadOnly: (v.ReadOnly ?? false) as boolean,
      Sticky: (v.Sticky ?? false) as boolean,
      AccessMode: (v.AccessMode ?? '') as string,
      AttachmentMode: (v.AttachmentMode ?? '') as string,
      MountOptions: (v.MountOptions ?? null) as CsiMountOptions | null,
      PerAlloc: (v.PerAlloc ?? false) as boolean,
    };
  }
  return out;
}

/** A task's volume mounts with Nomad's defaults (propagation "private"); null when there are none. */
export function canonicalizeVolumeMounts(mounts: readonly (Loose<VolumeMount> | null | undefined)[] | null | undefined): VolumeMount[] | null {
  if (!Array.isArray(mounts) || mounts.length === 0) return null;
  return mounts.map((raw) => {
    const m = (raw && typeof raw === 'object' ? raw : {}) as Loose<VolumeMount>;
    return {
      Volume: (m.Volume ?? '') as string,
      Destination: (m.Destination ?? '') as string,
      ReadOnly: (m.ReadOnly ?? false) as boolean,
      PropagationMode: (m.PropagationMode || 'private') as string,
      SELinuxLabel: (m.SELinuxLabel ?? '') as string,
    };
  });
}
