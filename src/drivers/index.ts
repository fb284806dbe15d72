/** The drivers package: the contract, the built-in drivers and their factories. */
import type { Clock } from '../time/clock.js';
import type { Driver } from './driver.js';
import { createMockDriver } from './mock/mock-driver.js';
import { createRawExecDriver, type RawExecDriverOptions } from './raw_exec/raw-exec-driver.js';

export * from './driver.js';
export { createRawExecDriver, RawExecDriver, RAW_EXEC_DRIVER_NAME, type RawExecDriverOptions } from './raw_exec/raw-exec-driver.js';
export { createMockDriver, MockDriver, MockSignalError, MOCK_DRIVER_NAME, type MockDriverOptions } from './mock/mock-driver.js';
export { RotatingFileWriter, listLogIndexes } from './logs/rotating-file-writer.js';

/** Options for the built-in driver set. */
export interface BuiltinDriverOptions extends RawExecDriverOptions {
  clock?: Clock;
  /** Include the mock driver (default true: Nomad registers it in dev/test builds). */
  mock?: boolean;
}

/** The built-in drivers by name: raw_exec and mock_driver. */
export function builtinDrivers(opts: BuiltinDriverOptions): Map<string, Driver> {
  const out = new Map<string, Driver>();
  const raw = createRawExecDriver(opts);
  out.set(raw.name, raw);
  if (opts.mock !== false) {
    const mock = createMockDriver({ clock: opts.clock });
    out.set(mock.name, mock);
  }
  return out;
}
