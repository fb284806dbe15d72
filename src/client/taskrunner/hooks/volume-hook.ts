/**
 * The volume hook: resolves the task's `volume_mount` blocks into host volume mounts for the
 * driver (volume-mounts.ts), on every start. A task whose mounts cannot be honoured does not
 * start (unrecoverable: the same definition would fail the same way), and a driver without
 * filesystem isolation is given none: raw_exec, as Nomad's ("volume mounting: none"), refuses
 * the task rather than run it with the volume silently missing.
 */
import { FsIsolation } from '../../../drivers/driver.js';
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';
import { resolveTaskMounts } from '../volume-mounts.js';
import { TaskSetupError } from '../task-setup-error.js';

/** Prestart: TaskPrep.mounts from the task's volume mounts and the client's host volumes. */
export class VolumeHook implements PrestartHook {
  readonly name = 'volumes';

  async prestart(req: TaskHookRequest): Promise<Partial<TaskPrep>> {
    const mounts = req.task.VolumeMounts ?? [];
    if (mounts.length === 0) return {};
    if (req.driver.capabilities().fsIsolation === FsIsolation.None) {
      throw new TaskSetupError(`task driver "${req.driver.name}" does not support host volumes (it has no filesystem isolation to mount them in)`);
    }
    const r = resolveTaskMounts(req.task.Name, mounts, req.group.Volumes ?? null, req.node.hostVolumes, req.alloc.Name);
    if ('problem' in r) throw new TaskSetupError(r.problem);
    return { mounts: r.mounts };
  }
}
