/**
 * The compiled seccomp filters on disk, where the sandbox's shell opens them for bubblewrap:
 * one for tasks and one for `alloc exec` sessions (which lets nsenter's setns through). Written
 * by the agent into its own data directory — never into a task directory, which a task could
 * change before its next start — atomically (a start reading the file meanwhile sees the old or
 * the new one, whole), readable by the agent's user only.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultSeccompProgram } from './default-seccomp-filter.js';

/** Paths of the two filters. */
export interface SeccompFiles {
  task: string;
  exec: string;
}

function writeAtomically(path: string, data: Buffer): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode: 0o600 });
  renameSync(tmp, path);
}

/** Writes both filters under `dir` (created 0700 if missing) and returns their paths. */
export function writeSeccompFiles(dir: string): SeccompFiles {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = { task: join(dir, 'seccomp-task.bpf'), exec: join(dir, 'seccomp-exec.bpf') };
  writeAtomically(files.task, defaultSeccompProgram());
  writeAtomically(files.exec, defaultSeccompProgram({ allowSetns: true }));
  return files;
}
