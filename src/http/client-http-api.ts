import type { DriverCapabilities, ExecSpec, TaskResourceUsage } from '../drivers/driver.js';
import type { HostStats } from '../client/node/host-stats.js';
import type { NodeMetaResponse } from '../client/node/node-meta.js';

/**
 * What the HTTP layer needs of a client agent in this process. The client-side routes
 * (exec, fs, logs, stats — src/http/routes/client-*.ts) extend this interface with what they
 * call; the agent passes its Client (or an adapter) as `client` to createHttpServer.
 */
export interface ClientHttpApi {
  /** The ID of the node this client registered as. */
  nodeId(): string;

  /** The namespace of a local allocation (for the ACL gate on a client-only agent). Optional. */
  allocNamespace?(allocId: string): string | undefined;
  /** Whether this client runs (or keeps the directory of) allocation `allocId`. */
  hasAlloc(allocId: string): boolean;
  /** The allocation's directory on this machine, or undefined if the client does not know it. */
  allocDir(allocId: string): string | undefined;
  /**
   * How to run `command` inside `task` of `allocId` (Driver.execSpec). Throws ClientApiError:
   * AllocNotFound, TaskNotFound (404) or TaskNotRunning (400).
   */
  execSpec(allocId: string, task: string, command: string[]): ExecSpec;
  /**
   * What the driver running `task` of `allocId` on this client isolates (for the exec ACL check);
   * no isolation for a driver this client does not have. Throws ClientApiError: AllocNotFound,
   * TaskNotFound (404).
   */
  taskDriverCapabilities(allocId: string, task: string): DriverCapabilities;
  /**
   * The command line (`[Command, ...Args]`) of the action `action` of `task` in `allocId`, from
   * the job the allocation runs (src/client/task-action-command.ts). Throws ClientApiError:
   * AllocNotFound, TaskNotFound, ActionJobMismatch (not an allocation of `jobId`) or
   * ActionNotFound. Optional: a client without it refuses actions.
   */
  taskActionCommand?(allocId: string, jobId: string, task: string, action: string): string[];
  /** Restarts one task, or every running task when `task` is undefined. Throws ClientApiError. */
  restartAlloc(allocId: string, task?: string): Promise<void>;
  /** Sends `signal` (e.g. "SIGUSR1") to one task, or to every task when `task` is undefined. */
  signalAlloc(allocId: string, task: string | undefined, signal: string): Promise<void>;
  /** Resource usage of every running task of the allocation, by task name. Throws ClientApiError. */
  allocStats(allocId: string): Promise<Record<string, TaskResourceUsage>>;
  /** The latest result of each native service check of the allocation, by check ID (Nomad's CheckQueryResult). Optional. */
  allocChecks?(allocId: string): Record<string, unknown>;
  /** The servers the client talks to (GET /v1/agent/servers on a client-only agent). Optional. */
  servers?(): string[];
  /** Replaces them (PUT /v1/agent/servers). Optional; throws ClientError when not possible. */
  setServers?(servers: string[]): void;
  /** The host's resource usage (GET /v1/client/stats). */
  hostStats(): HostStats;
  /**
   * Destroys a terminal allocation here: tasks gone, directory removed, forgotten in the state DB
   * (GET /v1/client/allocation/:id/gc). Throws AllocNotFound, or NotTerminal while it still runs.
   */
  collectAlloc(allocId: string): Promise<void>;
  /** Destroys every terminal allocation here (GET /v1/client/gc); answers how many. */
  collectAllAllocs(): Promise<number>;
  /** The node's static, dynamic and merged metadata (GET /v1/client/metadata). */
  nodeMeta(): NodeMetaResponse;
  /** Sets (string) or unsets (null) dynamic metadata keys and registers the node again. Throws MetaInvalid. */
  applyNodeMeta(changes: unknown): Promise<NodeMetaResponse>;
}
