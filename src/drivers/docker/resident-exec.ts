/**
 * Alloc exec through a container's resident shell (resident-shell.ts) on FIFOs from its pool
 * (exec-fifos.ts), and the per-container state that keeps the shell running: started in the
 * background when the task starts or is reattached; when it dies (the container restarted, the
 * engine went away) the next exec uses the Engine's exec and a new shell is started behind it.
 * tty sessions, arguments a line cannot carry, an empty pool, a FIFO that is not the agent's,
 * or a shell that is not up: the Engine's exec (container-exec.ts), as before.
 */
import { Socket } from 'node:net';
import { closeSync } from 'node:fs';
import type { ExecStream, ExecStreamEvents } from '../driver.js';
import type { EngineClient } from './engine-client.js';
import { FifoPool, type FifoSet } from './exec-fifos.js';
import { ResidentShell } from './resident-shell.js';

/** Starts that fail in a row before the container is left to the Engine's exec for good. */
const MAX_START_FAILURES = 3;

/** The resident shell and FIFO pool of one container. */
export class ResidentExec {
  private shell: ResidentShell | null = null;
  private pool: FifoPool | null = null;
  private starting = false;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly engine: EngineClient,
    private readonly containerId: string,
    private readonly secretsDir: string,
    private readonly logger?: { warn(msg: string): void; debug?(msg: string): void },
  ) {}

  /** Whether a container's runtime gets the fast path: runc only (gVisor/runsc and others use the Engine's exec). */
  static eligible(runtime: string | undefined): boolean {
    return runtime === 'runc' || runtime === 'io.containerd.runc.v2';
  }

  /** Starts the shell (and fills the pool) in the background unless it runs or is starting. */
  ensure(): void {
    if (this.closed || this.starting || this.shell?.running || this.failures >= MAX_START_FAILURES) return;
    this.starting = true;
    void (async () => {
      try {
        this.pool ??= new FifoPool(this.secretsDir);
        await this.pool.fill();
        const shell = await ResidentShell.start(this.engine, this.containerId, () => {
          if (this.shell === shell) this.shell = null;
        });
        if (this.closed) shell.close();
        else {
          this.shell = shell;
          this.failures = 0;
        }
      } catch (err) {
        this.failures++;
        this.logger?.debug?.(`docker: resident exec shell in ${this.containerId.slice(0, 12)}: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        this.starting = false;
      }
    })();
  }

  /** Whether a shell is up (for tests and the benchmark). */
  get ready(): boolean {
    return !!this.shell?.running;
  }

  /**
   * Starts `command` (non-empty) through the shell, or returns null when this exec must go
   * through the Engine's exec instead (see the file comment).
   */
  tryStart(command: string[], tty: boolean, events: ExecStreamEvents): ExecStream | null {
    if (tty || this.closed) return null;
    const shell = this.shell;
    if (!shell?.running || !this.pool) {
      this.ensure();
      return null;
    }
    if (command.some((a) => a.includes('\n') || a.includes('\0'))) return null;
    const set = this.pool.take();
    if (!set) return null;
    try {
      return startResidentCommand(shell, this.pool, set, command, events);
    } catch (err) {
      this.pool.remove(set);
      this.logger?.warn(`docker: exec in ${this.containerId.slice(0, 12)}: ${err instanceof Error ? err.message : String(err)}; using the Engine's exec`);
      return null;
    }
  }

  /** Ends the shell and removes the pool's FIFOs (the task stopped or the agent shuts down). */
  close(): void {
    this.closed = true;
    this.shell?.close();
    this.shell = null;
    this.pool?.close();
    this.pool = null;
  }
}

/** Opens the set's FIFOs (all checked, or none kept) and asks the shell to run the command on them. */
function startResidentCommand(shell: ResidentShell, pool: FifoPool, set: FifoSet, command: string[], events: ExecStreamEvents): ExecStream {
  const fds: number[] = [];
  try {
    for (const k of ['o', 'e', 'i'] as const) fds.push(pool.open(set, k));
  } catch (err) {
    for (const fd of fds) closeSync(fd);
    throw err;
  }
  const [oFd, eFd, iFd] = fds as [number, number, number];
  // libuv polls the FIFOs (no reads on the thread pool). A FIFO reports end-of-file only after
  // a writer came and went, so the output streams cannot end before the command opened them.
  const out = new Socket({ fd: oFd, readable: true, writable: false });
  const err = new Socket({ fd: eFd, readable: true, writable: false });
  const stdin = new Socket({ fd: iFd, readable: false, writable: true });
  let open = 2;
  let code: number | null = null;
  let pid = 0;
  let killed = false;
  let stdinClosed = false;
  let exited = false;
  let writing = 0;
  // Closed only once the shell has the FIFO open for the command (its P answer): the agent's
  // descriptor is the only writer, and a FIFO that lost its last writer before a reader came
  // blocks that reader's open for ever and drops the bytes written (resident-shell.ts).
  const endStdin = () => {
    if (stdinClosed && writing === 0 && pid > 0) stdin.destroy();
  };

  const finish = () => {
    if (exited || code === null || open > 0) return;
    exited = true;
    stdin.destroy();
    pool.remove(set);
    events.onExit(code);
  };
  for (const [sock, name] of [[out, 'stdout'], [err, 'stderr']] as const) {
    sock.on('data', (d: Buffer) => events.onOutput(name, d));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      open--;
      finish();
    });
  }
  stdin.on('error', () => undefined);
  shell.run(set.base, command, {
    onPid(p) {
      pid = p;
      if (killed) shell.kill(pid);
      endStdin();
    },
    onExit(c) {
      if (c < 0) {
        // The shell is gone (the container restarted or stopped): so is the command's exit code.
        events.onOutput('stderr', Buffer.from('the container\'s exec shell ended\n'));
        code = 127;
        out.destroy();
        err.destroy();
      } else code = c;
      finish();
    },
  });
  return {
    write(data) {
      if (exited || stdinClosed) return;
      writing++;
      stdin.write(data, () => {
        writing--;
        endStdin();
      });
    },
    closeStdin() {
      if (exited || stdinClosed) return;
      stdinClosed = true;
      // The command sees end-of-file once the agent's (only) writer is closed, after what was
      // written is in the pipe.
      endStdin();
    },
    resize() {
      /* no terminal: tty sessions use the Engine's exec */
    },
    kill() {
      if (exited || killed) return;
      killed = true;
      if (pid > 0) shell.kill(pid);
    },
  };
}
