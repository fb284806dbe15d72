import type { ExecSpec, TaskResourceUsage } from '../drivers/driver.js';

/**
 * What the HTTP layer needs of a client agent in this process. The client-side routes
 * (exec, fs, logs, stats — src/http/routes/client-*.ts) extend this interface with what they
 * call; the agent passes its Client (or an adapter) as `client` to createHttpServer.
 */
export interface ClientHttpApi {
  /** The ID of the node this client registered as. */
  nodeId(): string;

  /** Whether this client runs (or keeps the directory of) allocation `allocId`. */
  hasAlloc(allocId: string): boolean;
  /** The allocation's directory on this machine, or undefined if the client does not know it. */
  allocDir(allocId: string): string | undefined;
  /**
   * How to run `command` inside `task` of `allocId` (Driver.execSpec). Throws ClientApiError:
   * AllocNotFound, TaskNotFound (404) or TaskNotRunning (400).
   */
  execSpec(allocId: string, task: string, command: string[]): ExecSpec;
  /** Restarts one task, or every running task when `task` is undefined. Throws ClientApiError. */
  restartAlloc(allocId: string, task?: string): Promise<void>;
  /** Sends `signal` (e.g. "SIGUSR1") to one task, or to every task when `task` is undefined. */
  signalAlloc(allocId: string, task: string | undefined, signal: string): Promise<void>;
  /** Resource usage of every running task of the allocation, by task name. Throws ClientApiError. */
  allocStats(allocId: string): Promise<Record<string, TaskResourceUsage>>;
}

/** Codes of the errors a ClientHttpApi implementation throws, with the HTTP status each maps to. */
export const ClientApiErrorCode = {
  AllocNotFound: 'CLIENT_ALLOC_NOT_FOUND',
  TaskNotFound: 'CLIENT_TASK_NOT_FOUND',
  TaskNotRunning: 'CLIENT_TASK_NOT_RUNNING',
  BadSignal: 'CLIENT_BAD_SIGNAL',
} as const;
export type ClientApiErrorCode = (typeof ClientApiErrorCode)[keyof typeof ClientApiErrorCode];

const STATUS: Record<ClientApiErrorCode, number> = {
  CLIENT_ALLOC_NOT_FOUND: 404,
  CLIENT_TASK_NOT_FOUND: 404,
  CLIENT_TASK_NOT_RUNNING: 400,
  CLIENT_BAD_SIGNAL: 400,
};

/**
 * A failure of a client operation requested over HTTP; `status` (also as `statusCode`, which
 * the HTTP error handler reads) is the HTTP answer.
 */
export class ClientApiError extends Error {
  readonly status: number;
  readonly statusCode: number;
  constructor(
    readonly code: ClientApiErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ClientApiError';
    this.status = STATUS[code];
    this.statusCode = this.status;
  }
}
