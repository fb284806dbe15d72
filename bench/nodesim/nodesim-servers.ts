/**
 * The servers the node simulator runs against when none are given: one `caravan agent -server`
 * on SQLite (scenarios 1–3), started on loopback with its logs at "warn" so that 10,000 nodes'
 * registrations do not fill the bench's memory with log lines. Also reads a server's CPU time
 * and RSS from /proc, and asks any server for the leader.
 */
import { readProcStat, readRssBytes } from '../../src/drivers/proc/proc-stat.js';
import { startAgent, type AgentProcess } from '../../test/integration/helpers/agent-process.js';

/** Clock ticks per second of /proc/<pid>/stat (Linux's USER_HZ). */
const TICKS_PER_SECOND = 100;

/** Started servers, stopped and removed by `stop()`. */
export interface NodesimServers {
  /** "127.0.0.1:port" of each. */
  addresses: string[];
  /** The processes (empty when the servers were given by address). */
  processes: AgentProcess[];
  stop(): Promise<void>;
}

/** Starts one SQLite server. `heapMB` caps its V8 heap (default Node's). */
export async function startSqliteServer(heapMB?: number): Promise<NodesimServers> {
  const server = await startAgent({
    roleArgs: ['-server'],
    rawExec: false,
    extraArgs: ['-node', 'nodesim-s1', '-log-level', 'warn'],
    readyTimeoutMs: 60_000,
    ...(heapMB ? { env: { NODE_OPTIONS: `--max-old-space-size=${heapMB}` } } : {}),
  });
  return {
    addresses: [server.address.replace(/^http:\/\//, '')],
    processes: [server],
    async stop() {
      await server.stop();
      await server.cleanup();
    },
  };
}

/** Servers given by address (`--servers`): nothing to start or stop. */
export function givenServers(addresses: string[]): NodesimServers {
  return { addresses, processes: [], stop: async () => undefined };
}

/** A process's CPU seconds so far (user + system); 0 when it is gone. */
export function cpuSeconds(pid: number): number {
  return (readProcStat(pid)?.cpuTicks ?? 0) / TICKS_PER_SECOND;
}

/** A process's resident memory in MB; 0 when it is gone. */
export function rssMB(pid: number): number {
  return readRssBytes(pid) / (1024 * 1024);
}
