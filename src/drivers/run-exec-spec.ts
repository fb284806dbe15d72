/**
 * Runs a command in a task's environment to completion, as a driver's ExecSpec describes it:
 * no terminal, no input, output dropped. This is how a template's change script runs (Nomad runs
 * it through the driver's exec too), so it reaches inside a sandbox or a container exactly as
 * `alloc exec` does.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { formatDuration, msToNanos } from '../structs/duration.js';
import { setLongTimeout } from '../time/long-timeout.js';
import type { ExecSpec } from './driver.js';

/**
 * Resolves with the command's exit code (128 + n when signal n ended it); rejects when it cannot
 * be started or is still running after `timeoutMs`, in which case it has been killed.
 */
export function runExecSpec(spec: ExecSpec, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let kill = (): void => {};
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      timer.cancel();
      fn();
    };
    const timer = setLongTimeout(() => {
      kill();
      settle(() => reject(new Error(`timed out after ${formatDuration(msToNanos(timeoutMs))}`)));
    }, timeoutMs);
    try {
      if (spec.start) {
        const stream = spec.start(false, { onOutput: () => {}, onExit: (code) => settle(() => resolve(code)) });
        kill = () => stream.kill();
        stream.closeStdin();
        return;
      }
      const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, stdio: 'ignore' });
      kill = () => child.kill(spec.killSignal ?? 'SIGKILL');
      child.once('error', (err) => settle(() => reject(err)));
      child.once('exit', (code, signal) => settle(() => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0))));
    } catch (err) {
      // Refused before anything started (an empty command, a driver that cannot exec now).
      settle(() => reject(err));
    }
  });
}
