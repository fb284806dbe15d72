/**
 * Decoding of a group's `volume "name" { … }` blocks (Nomad's VolumeRequest) and a task's
 * `volume_mount { … }` blocks (Nomad's VolumeMount). Host and CSI volumes share the block; the
 * CSI-only settings are kept so a CSI volume parses (it is refused at registration, not here).
 */
import type { HclBody } from './hcl-body.js';
import type { TaskDraft, TaskGroupDraft } from '../structs/job-draft.js';

type VolumeDraft = NonNullable<NonNullable<TaskGroupDraft['Volumes']>[string]>;
type VolumeMountDraft = NonNullable<NonNullable<TaskDraft['VolumeMounts']>[number]>;

function volumeFromHcl(name: string, b: HclBody): VolumeDraft {
  const v: VolumeDraft = { Name: name };
  const type = b.string('type');
  if (type !== undefined) v.Type = type;
  const source = b.string('source');
  if (source !== undefined) v.Source = source;
  const readOnly = b.bool('read_only');
  if (readOnly !== undefined) v.ReadOnly = readOnly;
  const sticky = b.bool('sticky');
  if (sticky !== undefined) v.Sticky = sticky;
  const perAlloc = b.bool('per_alloc');
  if (perAlloc !== undefined) v.PerAlloc = perAlloc;
  const accessMode = b.string('access_mode');
  if (accessMode !== undefined) v.AccessMode = accessMode;
  const attachmentMode = b.string('attachment_mode');
  if (attachmentMode !== undefined) v.AttachmentMode = attachmentMode;
  const mount = b.block('mount_options');
  if (mount) {
    const fsType = mount.string('fs_type');
    const flags = mount.stringList('mount_flags');
    v.MountOptions = { FSType: fsType ?? '', MountFlags: flags ?? null };
    mount.finish();
  }
  b.finish();
  return v;
}

/** The group's `volume "name" { … }` blocks by name; undefined when there are none. */
export function volumesFromHcl(group: HclBody): Record<string, VolumeDraft> | undefined {
  const blocks = group.labelled('volume');
  if (blocks.length === 0) return undefined;
  const out: Record<string, VolumeDraft> = {};
  for (const { label, body } of blocks) out[label] = volumeFromHcl(label, body);
  return out;
}

/** The task's `volume_mount { … }` blocks in source order; undefined when there are none. */
export function volumeMountsFromHcl(task: HclBody): VolumeMountDraft[] | undefined {
  const blocks = task.blocks('volume_mount');
  if (blocks.length === 0) return undefined;
  return blocks.map((b) => {
    const m: VolumeMountDraft = {};
    const volume = b.string('volume');
    if (volume !== undefined) m.Volume = volume;
    const destination = b.string('destination');
    if (destination !== undefined) m.Destination = destination;
    const readOnly = b.bool('read_only');
    if (readOnly !== undefined) m.ReadOnly = readOnly;
    const propagation = b.string('propagation_mode');
    if (propagation !== undefined) m.PropagationMode = propagation;
    const selinux = b.string('selinux_label');
    if (selinux !== undefined) m.SELinuxLabel = selinux;
    b.finish();
    return m;
  });
}
