/**
 * The mock driver's task config, as Nomad's mock driver reads it (`run_for`, `exit_code`,
 * `start_error`, `kill_after`, `stdout_string`, …), validated with errors that name the field.
 */
import { DurationParseError, parseDuration } from '../../structs/duration.js';
import { DriverError, DriverErrorCode } from '../driver.js';

/** What a mock task does while it "runs". */
export interface MockCommand {
  runForMs: number;
  exitCode: number;
  exitSignal: number;
  exitErrMsg: string;
  signalError: string;
  stdoutString: string;
  stdoutRepeat: number;
  stdoutRepeatMs: number;
  stderrString: string;
  stderrRepeat: number;
  stderrRepeatMs: number;
}

/** A validated mock task config. */
export interface MockTaskConfig extends MockCommand {
  startError: string;
  startErrorRecoverable: boolean;
  startBlockForMs: number;
  killAfterMs: number;
}

function bad(field: string, want: string, got: unknown): DriverError {
  return new DriverError(DriverErrorCode.BadConfig, `mock_driver: config field "${field}" must be ${want}, got ${JSON.stringify(got)}`, false);
}

function str(cfg: Record<string, unknown>, field: string): string {
  const v = cfg[field];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw bad(field, 'a string', v);
  return v;
}

function int(cfg: Record<string, unknown>, field: string): number {
  const v = cfg[field];
  if (v === undefined || v === null || v === '') return 0;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw bad(field, 'an integer', v);
  return n;
}

function bool(cfg: Record<string, unknown>, field: string): boolean {
  const v = cfg[field];
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  throw bad(field, 'a boolean', v);
}

/** A Go duration string ("10s"; "" is zero) or a number of nanoseconds, in milliseconds. */
function durationMs(cfg: Record<string, unknown>, field: string): number {
  const v = cfg[field];
  if (v === undefined || v === null || v === '') return 0;
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v / 1_000_000;
  if (typeof v !== 'string') throw bad(field, 'a duration string like "10s"', v);
  try {
    const ns = parseDuration(v);
    if (ns < 0) throw bad(field, 'a non-negative duration', v);
    return ns / 1_000_000;
  } catch (err) {
    if (err instanceof DurationParseError) throw bad(field, 'a duration string like "10s"', v);
    throw err;
  }
}

/** Validates a mock_driver config block. */
export function parseMockConfig(cfg: Record<string, unknown>): MockTaskConfig {
  return {
    startError: str(cfg, 'start_error'),
    startErrorRecoverable: bool(cfg, 'start_error_recoverable'),
    startBlockForMs: durationMs(cfg, 'start_block_for'),
    killAfterMs: durationMs(cfg, 'kill_after'),
    runForMs: durationMs(cfg, 'run_for'),
    exitCode: int(cfg, 'exit_code'),
    exitSignal: int(cfg, 'exit_signal'),
    exitErrMsg: str(cfg, 'exit_err_msg'),
    signalError: str(cfg, 'signal_error'),
    stdoutString: str(cfg, 'stdout_string'),
    stdoutRepeat: int(cfg, 'stdout_repeat'),
    stdoutRepeatMs: durationMs(cfg, 'stdout_repeat_duration'),
    stderrString: str(cfg, 'stderr_string'),
    stderrRepeat: int(cfg, 'stderr_repeat'),
    stderrRepeatMs: durationMs(cfg, 'stderr_repeat_duration'),
  };
}
