/**
 * The `host_volume "name" { policy | capabilities }` rule at job submission, as Nomad's job
 * register endpoint enforces it: each host volume a group asks for needs `mount-readwrite`, or
 * `mount-readonly` (or `mount-readwrite`) when the group asks for it read-only; a task mounting
 * one with `bidirectional` propagation needs `mount-readwrite` too. Rules name the volume's
 * `source` (without the per_alloc suffix), so they cover static and dynamic volumes alike.
 *
 * It reads the job as submitted (API JSON, before validation), defensively: a value of the
 * wrong type is judged the stricter way (anything but `ReadOnly: true` asks to write) and left
 * for validation to name.
 */
import type { Acl } from './acl.js';

/** The first host volume mount a token may not make: the volume's source and the capability it lacks. */
export interface HostVolumeMountDenial {
  group: string;
  volume: string;
  capability: 'mount-readonly' | 'mount-readwrite';
}

type Raw = Record<string, unknown>;

function isRaw(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The first host volume of `job` (API JSON) that `acl` may not mount as asked, or undefined. */
export function deniedHostVolumeMount(acl: Pick<Acl, 'allowHostVolumeOperation'>, job: unknown): HostVolumeMountDenial | undefined {
  if (!isRaw(job) || !Array.isArray(job['TaskGroups'])) return undefined;
  for (const tg of job['TaskGroups']) {
    if (!isRaw(tg)) continue;
    const group = typeof tg['Name'] === 'string' ? tg['Name'] : '';
    const volumes = isRaw(tg['Volumes']) ? tg['Volumes'] : {};
    for (const vol of Object.values(volumes)) {
      if (!isRaw(vol) || vol['Type'] !== 'host') continue;
      const volume = typeof vol['Source'] === 'string' ? vol['Source'] : '';
      if (vol['ReadOnly'] === true) {
        if (!acl.allowHostVolumeOperation(volume, 'mount-readonly') && !acl.allowHostVolumeOperation(volume, 'mount-readwrite')) {
          return { group, volume, capability: 'mount-readonly' };
        }
      } else if (!acl.allowHostVolumeOperation(volume, 'mount-readwrite')) {
        return { group, volume, capability: 'mount-readwrite' };
      }
    }
    for (const task of Array.isArray(tg['Tasks']) ? tg['Tasks'] : []) {
      if (!isRaw(task) || !Array.isArray(task['VolumeMounts'])) continue;
      for (const mount of task['VolumeMounts']) {
        if (!isRaw(mount) || mount['PropagationMode'] !== 'bidirectional' || typeof mount['Volume'] !== 'string') continue;
        const vol = volumes[mount['Volume']];
        if (!isRaw(vol) || vol['Type'] !== 'host') continue;
        const volume = typeof vol['Source'] === 'string' ? vol['Source'] : '';
        if (!acl.allowHostVolumeOperation(volume, 'mount-readwrite')) return { group, volume, capability: 'mount-readwrite' };
      }
    }
  }
  return undefined;
}
