/** How etcd client failures become log errors: anything not already a LogError is LOG_IO. */
import { LogError } from './log-backend.js';

export function etcdLogError(err: unknown, what: string): LogError {
  if (err instanceof LogError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new LogError('LOG_IO', `${what} failed: etcd unreachable or failing (${message})`, { cause: err });
}

/**
 * etcd refused a read or watch at a revision its history no longer holds ("mvcc: required
 * revision has been compacted"), or a compaction to a revision already compacted.
 */
export function isEtcdCompactedError(err: unknown): boolean {
  return err instanceof Error && /has been compacted/.test(err.message);
}
