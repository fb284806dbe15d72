/**
 * Resolving a task's `volume_mount` blocks into the host paths a driver binds (Nomad's
 * volume_hook): each mount names a group volume, whose source (per_alloc: suffixed with the
 * allocation's index) must be a host volume this client offers. The host path always comes from
 * the client's configuration, never from the job. Pure: the caller gives the client's volumes.
 */
import { posix } from 'node:path';
import type { TaskMount } from '../../drivers/driver.js';
import { hostVolumeSource, PROPAGATION_MODES, VolumeType, type ClientHostVolumeConfig, type VolumeMount, type VolumeRequest } from '../../structs/host-volume.js';

/** Where no volume may be mounted: the sandbox root and the kernel's filesystems. */
const RESERVED_DESTINATIONS = ['/proc', '/dev', '/sys'];

/** Why a destination cannot be used, or null when it can; `normalized` is filled on success. */
export function destinationProblem(destination: string): string | null {
  if (destination === '') return 'destination is required';
  if (destination.includes('\0')) return 'destination contains a null character';
  if (destination.split('/').includes('..')) return `destination ${JSON.stringify(destination)} must not contain ".."`;
  const normalized = normalizeDestination(destination);
  if (normalized === '/') return 'destination must not be the task\'s root';
  for (const r of RESERVED_DESTINATIONS) {
    if (normalized === r || normalized.startsWith(`${r}/`)) return `destination ${JSON.stringify(destination)} is under ${r}, which the sandbox owns`;
  }
  return null;
}

/** The absolute form of a destination: relative ones are relative to the task's root, as Nomad's. */
export function normalizeDestination(destination: string): string {
  return posix.normalize(posix.join('/', destination)).replace(/\/+$/, '') || '/';
}

/**
 * The mounts of a task, or the first problem: an undefined group volume, a non-host volume, a
 * host volume the client does not offer, a bad destination or propagation mode. A mount is
 * read-only when the host volume, the group's request or the mount itself says so (a task
 * asking read-write of a read-only volume still gets it read-only, as Nomad).
 */
export function resolveTaskMounts(
  taskName: string,
  mounts: readonly VolumeMount[],
  volumes: Readonly<Record<string, VolumeRequest>> | null,
  offered: Readonly<Record<string, ClientHostVolumeConfig>> | undefined,
  allocName: string,
): { mounts: TaskMount[] } | { problem: string } {
  const out: TaskMount[] = [];
  for (const [i, m] of mounts.entries()) {
    const where = `task "${taskName}" volume_mount[${i}]`;
    const req = volumes && Object.prototype.hasOwnProperty.call(volumes, m.Volume) ? volumes[m.Volume] : undefined;
    if (!req) return { problem: `${where}: the group has no volume ${JSON.stringify(m.Volume)}` };
    if (req.Type !== VolumeType.Host) return { problem: `${where}: volume ${JSON.stringify(m.Volume)} is of type ${JSON.stringify(req.Type)}; only host volumes are supported` };
    const source = hostVolumeSource(req, allocName);
    const vol = offered && Object.prototype.hasOwnProperty.call(offered, source) ? offered[source] : undefined;
    if (!vol) return { problem: `${where}: host volume ${JSON.stringify(source)} is not offered by this client` };
    const bad = destinationProblem(m.Destination);
    if (bad) return { problem: `${where}: ${bad}` };
    const propagation = m.PropagationMode || 'private';
    if (!(PROPAGATION_MODES as readonly string[]).includes(propagation)) {
      return { problem: `${where}: propagation_mode must be one of ${PROPAGATION_MODES.join(', ')}, got ${JSON.stringify(propagation)}` };
    }
    out.push({ hostPath: vol.Path, taskPath: normalizeDestination(m.Destination), readOnly: vol.ReadOnly || req.ReadOnly || m.ReadOnly === true, propagationMode: propagation });
  }
  return { mounts: out };
}
