/**
 * The dispatch-payload hook: for a dispatched job's task with a `dispatch_payload { file }`
 * block, writes the job's payload (base64 in Job.Payload) to `local/<file>` before each start,
 * as Nomad's client does. Runs after the task-dir hook, which provides the directories.
 */
import { CaravanError } from '../../../structs/caravan-error.js';
import { relative, resolve, isAbsolute } from 'node:path';
import { writeFileInsideSync } from '../../../fs/confined-write.js';
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';

/** A dispatch_payload file that would land outside the task's local/ directory. */
export class DispatchPayloadPathError extends CaravanError<'DISPATCH_PAYLOAD_PATH'> {
  constructor(file: string) {
    super('DISPATCH_PAYLOAD_PATH', { file: JSON.stringify(file) });
    this.name = 'DispatchPayloadPathError';
  }
}

/** Writes the dispatch payload into the task directory. */
export class DispatchPayloadHook implements PrestartHook {
  readonly name = 'dispatch-payload';

  async prestart(req: TaskHookRequest, prep: Readonly<TaskPrep>): Promise<Partial<TaskPrep>> {
    const file = req.task.DispatchPayload?.File;
    const payload = req.alloc.Job?.Payload;
    if (!file || !prep.dirs) return {};
    const target = resolve(prep.dirs.localDir, file);
    const rel = relative(prep.dirs.localDir, target);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new DispatchPayloadPathError(file);
    // Nomad writes the file even for an empty payload, so the task can rely on it existing.
    // Following no link the task may have planted at the destination.
    writeFileInsideSync(prep.dirs.localDir, rel, payload ? Buffer.from(payload, 'base64') : Buffer.alloc(0));
    return {};
  }
}
