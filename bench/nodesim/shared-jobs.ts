/**
 * One job object per job version for every simulated node in the process. A client already
 * keeps one job per version for all its allocations (client.ts, jobKey); across nodes, each
 * parses its own copy from its own answer, so a job placed on 10,000 nodes was held 10,000
 * times (~5 KB each for a one-task mock job). Real nodes are separate machines and pay that each;
 * nodes simulated in one process need not. Allocations are handed to the client with the shared
 * job in place of the parsed one, equal in content: what the client does is unchanged.
 */
import type { ServerConnection } from '../../src/client/server-connection.js';
import type { Job } from '../../src/structs/job.js';

/** What identifies a job version (as the client's jobKey): allocations at one key carry equal jobs. */
function jobKey(job: Job): string {
  return `${job.Namespace}\u0000${job.ID}\u0000${job.JobModifyIndex}`;
}

/** Job objects by version, held weakly: a version no node runs any more is collected. */
export class SharedJobs {
  private readonly byKey = new Map<string, WeakRef<Job>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    if (this.byKey.get(key)?.deref() === undefined) this.byKey.delete(key);
  });

  /** The shared object of `job`'s version (`job` itself the first time it is seen). */
  intern(job: Job): Job {
    const key = jobKey(job);
    const held = this.byKey.get(key)?.deref();
    if (held) return held;
    this.byKey.set(key, new WeakRef(job));
    this.forget.register(job, key);
    return job;
  }

  /** Job versions currently shared. */
  size(): number {
    return this.byKey.size;
  }

  /** `conn` with the jobs of fetched allocations replaced by their shared objects. */
  wrap(conn: ServerConnection): ServerConnection {
    return {
      ...conn,
      fetchAllocs: async (nodeId, ids, signal) => {
        const allocs = await conn.fetchAllocs(nodeId, ids, signal);
        for (const a of allocs) if (a.Job) a.Job = this.intern(a.Job);
        return allocs;
      },
    };
  }
}
