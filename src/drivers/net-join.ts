/**
 * Joining a group network namespace from a driver that starts host processes (raw_exec, exec):
 * util-linux's nsenter enters the namespace by path and execs the command (no fork without
 * --pid, so the pid the supervisor watches is the command's own).
 */
import { accessSync, constants } from 'node:fs';
import { DriverError, DriverErrorCode } from './driver.js';

const NSENTER_CANDIDATES = ['/usr/bin/nsenter', '/bin/nsenter', '/usr/sbin/nsenter', '/sbin/nsenter'];

/** nsenter's path; throws DriverError when the host has none (a group network cannot be joined). */
export function nsenterPath(): string {
  for (const p of NSENTER_CANDIDATES) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  throw new DriverError(DriverErrorCode.StartFailed, 'joining the group network needs nsenter (util-linux), which this client lacks', false);
}

/** The argv prefix that runs what follows inside the namespace at `netnsPath`. */
export function joinNetnsArgv(nsenter: string, netnsPath: string): string[] {
  return [nsenter, `--net=${netnsPath}`, '--'];
}
