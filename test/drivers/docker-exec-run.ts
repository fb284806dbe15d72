/**
 * Runs alloc exec commands against the docker driver the way the exec session does: through the
 * spec's own `start` (the Engine's exec) or, for the direct path, as a host command on pipes or
 * a terminal (the session would start it from its exec spawner).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { DIRECT_EXEC_HELPER, directExecAvailable } from '../../src/drivers/docker/direct-exec.js';
import type { DockerDriver } from '../../src/drivers/docker/docker-driver.js';
import type { ExecSpec, ExecStream, ExecStreamEvents } from '../../src/drivers/driver.js';
import { startPipeProcess, startPtyProcess } from '../../src/http/exec/exec-process.js';

/** Which way an exec went. */
export type ExecPath = 'direct' | 'engine';

export function pathOf(spec: ExecSpec): ExecPath {
  return spec.start ? 'engine' : 'direct';
}

/** Starts the spec as the exec session would. */
export function startExec(spec: ExecSpec, tty: boolean, events: ExecStreamEvents): ExecStream {
  if (spec.start) return spec.start(tty, events);
  return tty ? startPtyProcess(spec, undefined, events) : startPipeProcess(spec, events);
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs one exec (asserting the path it takes) and collects its output and exit code. */
export function runExec(d: DockerDriver, taskId: string, cmd: string[], tty: boolean, opts: { input?: string; path?: ExecPath } = {}): Promise<ExecResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const events: ExecStreamEvents = {
      onOutput: (s, b) => (s === 'stdout' ? (stdout += b.toString()) : (stderr += b.toString())),
      onExit: (code) => resolve({ stdout, stderr, code }),
    };
    const spec = d.execSpec(taskId, cmd);
    if (opts.path) assert.equal(pathOf(spec), opts.path, `exec goes ${opts.path === 'direct' ? 'directly into the container' : 'through the engine'}`);
    const s = startExec(spec, tty, events);
    if (tty) s.resize({ width: 100, height: 30 });
    if (opts.input !== undefined) {
      s.write(Buffer.from(opts.input));
      s.closeStdin();
    }
  });
}

/** Waits until the driver prepared the direct path of a task (it does so in the background). */
export async function waitForDirect(d: DockerDriver, taskId: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (pathOf(d.execSpec(taskId, ['true'])) !== 'direct') {
    if (Date.now() > deadline) throw new Error(`the direct exec path of ${taskId} was never prepared`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Builds the direct-exec helper (as `npm run build` does) so a test file runs after a bare tsc.
 * Returns why the direct path cannot be tested (no Go: the build says SKIPPED), or false.
 */
export function buildDirectExecHelper(): string | false {
  if (spawnSync('go', ['version']).status !== 0) {
    console.log('*** SKIPPED: docker direct exec tests (no `go` on PATH: native/docker-exec is not built) ***');
    return 'no `go` on PATH: native/docker-exec is not built';
  }
  const b = spawnSync(process.execPath, ['scripts/build-native.mjs'], { stdio: 'inherit' });
  assert.equal(b.status, 0, 'building native/docker-exec');
  assert.ok(directExecAvailable(), `${DIRECT_EXEC_HELPER} was not built`);
  return false;
}
