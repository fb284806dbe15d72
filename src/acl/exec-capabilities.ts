/**
 * Which namespace capabilities an exec into a task needs, decided by what the task's driver
 * isolates — never by the driver's name (Nomad's client execImpl checks
 * drivers.Capabilities.FSIsolation the same way).
 */
import { FsIsolation, type DriverCapabilities } from '../drivers/driver.js';
import type { NamespaceCapability } from './capabilities.js';

/** The isolations under which an exec'd command cannot see the host's filesystem. */
const ISOLATING: ReadonlySet<string> = new Set<string>([FsIsolation.Chroot, FsIsolation.Image]);

/**
 * `alloc-exec` always; `alloc-node-exec` as well when the driver does not isolate the filesystem
 * (the command is then a shell on the host as the agent's user). Fails closed: unknown
 * capabilities (a driver this client does not have) or an isolation value not known here count
 * as no isolation.
 */
export function execCapabilities(caps: DriverCapabilities | undefined): NamespaceCapability[] {
  const isolated = caps !== undefined && ISOLATING.has(caps.fsIsolation);
  return isolated ? ['alloc-exec'] : ['alloc-exec', 'alloc-node-exec'];
}
