/**
 * The task-api hook (Nomad's api_hook): gives the task Nomad's Task API, the agent's HTTP API on
 * a Unix socket at `${NOMAD_SECRETS_DIR}/api.sock`, so a task reaches the API without knowing
 * the agent's address or its TLS set-up. Every request on it must carry a token (the task's
 * workload identity or an ACL token): see http/task-api/task-api-server.ts.
 *
 * The socket is made before the first start and kept across restarts of the task; after an
 * agent restart a reattached task gets it again in poststart (its prestart does not run). It is
 * closed and removed when the task is dead for good, and closed when the agent shuts down.
 * Like Nomad's, the hook soft-fails: a task that needs the socket fails on its own without it.
 *
 * The socket belongs to the user the task runs as (`user`, or exec's default `nobody`) with mode
 * 0600 when the agent is root; else it stays the agent's user's, mode 0600 (Nomad opens it to
 * everyone then, which would mean a chmod by name in a directory the task can write).
 */
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { listenConfinedUnixSocket, type ConfinedSocket, type SocketOwner } from '../../../fs/confined-unix-socket.js';
import { EXEC_DRIVER_NAME, lookupUser } from '../../../drivers/exec/exec-driver.js';
import { errorMessage } from '../../client-error.js';
import type { PoststartHook, PrestartHook, ShutdownHook, StopHook, TaskHookRequest, TaskPrep } from '../interfaces.js';

/** The socket's name inside the task's secrets directory (Nomad's). */
export const TASK_API_SOCKET = 'api.sock';

/** Where the connections made on a task's socket go (the agent's TaskApiServer). */
export interface TaskApiConnections {
  /** Serves the agent's HTTP API on `socket`, authenticating every request. */
  accept(socket: Socket): void;
}

/** The user exec runs a task without `user` as (exec-driver.ts). */
const EXEC_DEFAULT_USER = 'nobody';

/** Listens on the task's `secrets/api.sock`; see the file comment. */
export class TaskApiHook implements PrestartHook, PoststartHook, StopHook, ShutdownHook {
  readonly name = 'task-api';
  private socket: ConfinedSocket | null = null;

  constructor(
    private readonly connections: TaskApiConnections,
    private readonly logger: Logger,
  ) {}

  async prestart(req: TaskHookRequest): Promise<Partial<TaskPrep>> {
    await this.open(req);
    return {};
  }

  async poststart(req: TaskHookRequest): Promise<void> {
    await this.open(req);
  }

  async stop(): Promise<void> {
    await this.close();
  }

  async shutdown(): Promise<void> {
    await this.close();
  }

  /** Listens unless already listening (a restart of the task keeps its socket). */
  private async open(req: TaskHookRequest): Promise<void> {
    if (this.socket) return;
    const dirs = req.allocDir.taskDirs(req.task.Name);
    try {
      this.socket = await listenConfinedUnixSocket({
        root: dirs.dir,
        dir: 'secrets',
        name: TASK_API_SOCKET,
        owner: this.owner(req),
        onConnection: (sock) => this.connections.accept(sock),
      });
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'error creating task api socket');
    }
  }

  private async close(): Promise<void> {
    const s = this.socket;
    this.socket = null;
    await s?.close();
  }

  /** The user the task runs as, when it is a user of this host; null: the agent's own. */
  private owner(req: TaskHookRequest): SocketOwner | null {
    const name = req.task.User || (req.driver.name === EXEC_DRIVER_NAME ? EXEC_DEFAULT_USER : '');
    if (!name) return null;
    // A numeric user (docker's `user = "1000"` or "1000:1000") needs no passwd entry on this host.
    const numeric = /^(\d+)(?::(\d+))?$/.exec(name);
    if (numeric) return { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) };
    try {
      const u = lookupUser(name);
      return { uid: u.uid, gid: u.gid };
    } catch (err) {
      this.logger.debug({ user: name, err: errorMessage(err) }, 'task api socket stays the agent user\'s: the task\'s user is not a user of this host');
      return null;
    }
  }
}
