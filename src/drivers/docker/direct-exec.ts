/**
 * The fast path of alloc exec into a runc container: instead of the Engine's exec (dockerd →
 * containerd → shim → runc exec, ~40 ms), a small helper (native/docker-exec, Go, built with
 * the project) enters the container itself, ~3 ms: its namespaces, cgroups and root, then the
 * user, capabilities, no_new_privs, rlimits and seccomp filter Docker gives an exec — taken from
 * a reference process `runc exec` starts in the container once (and kills), the container's
 * init (rlimits) and the runtime's bundle config.json (env, cwd) — and runs the command.
 *
 * Per container the helper's `prepare` is run once (at start or reattach, ~0.1 s, in the
 * background) and its answer cached;
 * an exec then costs one spawn of the helper, from the agent's exec spawner like any host
 * command (the ExecSpec has no `start`). A container the helper will not enter (gVisor/runsc,
 * its own user namespace, an AppArmor/SELinux label, anything unexpected), a helper that was not
 * built (no Go on the build machine), or a prepare still running: the Engine's exec is used.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ExecSpec } from '../driver.js';

/** Where `npm run build` puts the helper (scripts/build-native.mjs). */
export const DIRECT_EXEC_HELPER = fileURLToPath(new URL('../../../native/caravan-docker-exec', import.meta.url));

/** The helper's exit code for "this container cannot be entered directly". */
const EXIT_INELIGIBLE = 3;

/** What `prepare` prints: the container's exec context (see native/docker-exec/spec.go). */
export interface DirectExecContext {
  pid: number;
  startTime: string;
  containerId: string;
  [k: string]: unknown;
}

/** The outcome of preparing one container. */
export type Prepared = { ok: true; context: DirectExecContext } | { ok: false; reason: string };

/** Whether the helper was built and can be run. */
export function directExecAvailable(helper = DIRECT_EXEC_HELPER): boolean {
  try {
    accessSync(helper, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Runs the helper's `prepare` for the container whose init is `pid`. */
export function prepareDirectExec(containerId: string, pid: number, helper = DIRECT_EXEC_HELPER): Promise<Prepared> {
  return new Promise((resolve) => {
    execFile(helper, ['prepare', String(pid), containerId], { timeout: 15_000, maxBuffer: 4 * 1024 * 1024, env: { PATH: process.env['PATH'] ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' } }, (err, stdout, stderr) => {
      if (err) {
        const code = (err as { code?: unknown }).code;
        const why = stderr.trim() || err.message;
        return resolve({ ok: false, reason: code === EXIT_INELIGIBLE ? why : `helper failed: ${why}` });
      }
      try {
        const context = JSON.parse(stdout) as DirectExecContext;
        if (context.pid !== pid || context.containerId !== containerId) return resolve({ ok: false, reason: 'helper answered for another container' });
        resolve({ ok: true, context });
      } catch {
        resolve({ ok: false, reason: 'helper printed no context' });
      }
    });
  });
}

/**
 * The exec spec of a command run through the helper: a host command (the session starts it on
 * pipes or a terminal from the exec spawner) whose only input is the context in its environment;
 * the helper tells a terminal from pipes itself. Ending the session sends SIGTERM, on which the
 * helper SIGKILLs the command (a SIGKILLed helper could not pass it on).
 */
export function directExecSpec(context: DirectExecContext, command: string[], helper = DIRECT_EXEC_HELPER): ExecSpec {
  const payload = { ...context, args: command.length > 0 ? command : ['/bin/sh'] };
  return { file: helper, args: ['exec'], cwd: '/', env: { CARAVAN_DOCKER_EXEC: JSON.stringify(payload) }, killSignal: 'SIGTERM' };
}
