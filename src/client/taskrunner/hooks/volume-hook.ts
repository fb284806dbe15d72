/**
 * The volume hook: resolves the task's `volume_mount` blocks into host volume mounts for the
 * driver (volume-mounts.ts), on every start. A task whose mounts cannot be honoured does not
 * start (unrecoverable: the same definition would fail the same way), and a driver without
 * filesystem isolation is given none: raw_exec, as Nomad's ("volume mounting: none"), refuses
 * the task rather than run it with the volume silently missing.
 */
import { FsIsolation, type TaskDirs } from '../../../drivers/driver.js';
import type { VolumeMount } from '../../../structs/host-volume.js';
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';
import { resolveTaskMounts } from '../volume-mounts.js';
import { TaskSetupError } from '../task-setup-error.js';
import { buildTaskEnv } from '../../taskenv/task-env.js';
import { interpolateString } from '../../taskenv/interpolate.js';

/** The task's directories inside an exec sandbox or a container. */
const IN_TASK_DIRS: TaskDirs = { dir: '/', localDir: '/local', secretsDir: '/secrets', tmpDir: '/tmp', sharedAllocDir: '/alloc', logDir: '/alloc/logs' };

/**
 * The mounts with `${NOMAD_*}` references in the volume, destination and propagation mode
 * resolved as Nomad's volume hook does, against the directories as the task sees them.
 */
function interpolated(req: TaskHookRequest, mounts: readonly VolumeMount[]): VolumeMount[] {
  const { scope } = buildTaskEnv({ alloc: req.alloc, group: req.group, task: req.task, node: req.node, dirs: IN_TASK_DIRS });
  return mounts.map((m) => ({
    ...m,
    Volume: interpolateString(m.Volume, scope),
    Destination: interpolateString(m.Destination, scope),
    PropagationMode: interpolateString(m.PropagationMode, scope),
  }));
}

/** Prestart: TaskPrep.mounts from the task's volume mounts and the client's host volumes. */
export class VolumeHook implements PrestartHook {
  readonly name = 'volumes';

  async prestart(req: TaskHookRequest): Promise<Partial<TaskPrep>> {
    const declared = req.task.VolumeMounts ?? [];
    if (declared.length === 0) return {};
    if (req.driver.capabilities().fsIsolation === FsIsolation.None) {
      throw new TaskSetupError(`task driver "${req.driver.name}" does not support host volumes (it has no filesystem isolation to mount them in)`);
    }
    const mounts = declared.some((m) => [m.Volume, m.Destination, m.PropagationMode].some((v) => v.includes('${'))) ? interpolated(req, declared) : declared;
    const r = resolveTaskMounts(req.task.Name, mounts, req.group.Volumes ?? null, req.node.hostVolumes, req.alloc.Name);
    if ('problem' in r) throw new TaskSetupError(r.problem);
    return { mounts: r.mounts };
  }
}
