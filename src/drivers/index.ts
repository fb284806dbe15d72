/** The drivers package: the contract, the built-in drivers and their factories. */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Clock } from '../time/clock.js';
import type { Driver } from './driver.js';
import { createDockerDriver } from './docker/docker-driver.js';
import { createExecDriver } from './exec/exec-driver.js';
import { createMockDriver, MOCK_DRIVER_NAME } from './mock/mock-driver.js';
import { createRawExecDriver, type RawExecDriverOptions } from './raw_exec/raw-exec-driver.js';

export * from './driver.js';
export { createRawExecDriver, RawExecDriver, RAW_EXEC_DRIVER_NAME, type RawExecDriverOptions } from './raw_exec/raw-exec-driver.js';
export { createMockDriver, MockDriver, MockSignalError, MOCK_DRIVER_NAME, type MockDriverOptions } from './mock/mock-driver.js';
export { RotatingFileWriter, listLogIndexes } from './logs/rotating-file-writer.js';
export { createExecDriver, ExecDriver, EXEC_DRIVER_NAME, type ExecDriverOptions } from './exec/exec-driver.js';
export { createDockerDriver, DockerDriver, DOCKER_DRIVER_NAME, type DockerDriverOptions } from './docker/docker-driver.js';

/** Options for the built-in driver set. */
export interface BuiltinDriverOptions extends RawExecDriverOptions {
  clock?: Clock;
  /** Bodies of the agent's `plugin "<name>" { config { … } }` blocks, by plugin name. */
  plugins?: Record<string, Record<string, unknown>>;
  /** The client's `chroot_env` for the exec driver; Nomad's default when undefined. */
  chrootEnv?: Record<string, string>;
}

/**
 * The built-in drivers by name: raw_exec, exec, docker, and mock_driver only where the agent's
 * `plugin "mock_driver" { config { enabled = true } }` asks for it (-dev does): it runs exec'd
 * commands on the host, so elsewhere it is not registered at all, not even as undetected.
 */
export function builtinDrivers(opts: BuiltinDriverOptions): Map<string, Driver> {
  const out = new Map<string, Driver>();
  // Off unless the agent's `plugin "raw_exec" { config { enabled = true } }` (or -dev) says so.
  const raw = createRawExecDriver({ ...opts, enabled: opts.plugins?.['raw_exec']?.['enabled'] === true });
  out.set(raw.name, raw);
  const exec = createExecDriver({ ...opts, pluginConfig: opts.plugins?.['exec'], ...(opts.chrootEnv ? { chrootEnv: opts.chrootEnv } : {}) });
  out.set(exec.name, exec);
  // The client's data dir names it on its containers: a stable id across agent restarts.
  const clientId = createHash('sha256').update(resolve(opts.dataDir)).digest('hex').slice(0, 16);
  const docker = createDockerDriver({ pluginConfig: opts.plugins?.['docker'], clock: opts.clock, logger: opts.logger, clientId });
  out.set(docker.name, docker);
  if (opts.plugins?.[MOCK_DRIVER_NAME]?.['enabled'] === true) {
    const mock = createMockDriver({ clock: opts.clock });
    out.set(mock.name, mock);
  }
  return out;
}
