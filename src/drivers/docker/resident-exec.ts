/**
 * Alloc exec through a container's resident shell (resident-shell.ts) on anonymous pipes it
 * makes and whose ends the agent takes through /proc (shell-pipe-ends.ts), and the
 * per-container state that keeps the shell running: started in the background when the task
 * starts or is reattached; when it dies (the container restarted, the engine went away) the
 * next exec uses the Engine's exec and a new shell is started behind it. tty sessions,
 * arguments a line cannot carry, a shell that is not up, or an end that is not one of the
 * shell's pipes: the Engine's exec (container-exec.ts), as before.
 */
import { Socket } from 'node:net';
import type { ExecStream, ExecStreamEvents } from '../driver.js';
import type { EngineClient } from './engine-client.js';
import { ResidentShell, type ShellRequestEvents } from './resident-shell.js';
import { ShellPipeEnds, type PipeEnds } from './shell-pipe-ends.js';

/** Starts that fail in a row before the container is left to the Engine's exec for good. */
const MAX_START_FAILURES = 3;
/** The pause before trying again after a failed start, times the failures so far. */
const RETRY_MS = 300;

/** The resident shell of one container, and its /proc directory. */
export class ResidentExec {
  private shell: ResidentShell | null = null;
  private ends: ShellPipeEnds | null = null;
  private starting = false;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly engine: EngineClient,
    private readonly containerId: string,
    private readonly logger?: { warn(msg: string): void; debug?(msg: string): void },
  ) {}

  /** Whether a container's runtime gets the fast path: runc only (gVisor/runsc and others use the Engine's exec). */
  static eligible(runtime: string | undefined): boolean {
    return runtime === 'runc' || runtime === 'io.containerd.runc.v2';
  }

  /** Starts the shell (and takes hold of its /proc directory) in the background unless it runs or is starting. */
  ensure(): void {
    if (this.closed || this.starting || this.shell?.running || this.failures >= MAX_START_FAILURES) return;
    this.starting = true;
    void (async () => {
      try {
        const shell = await ResidentShell.start(this.engine, this.containerId, () => {
          if (this.shell !== shell) return;
          this.shell = null;
          this.ends?.close();
          this.ends = null;
        });
        let ends: ShellPipeEnds;
        try {
          const container = await this.engine.json<{ State: { Pid: number } }>({ method: 'GET', path: `/containers/${this.containerId}/json` });
          ends = ShellPipeEnds.open(shell.hostPid, container.State.Pid);
        } catch (err) {
          shell.close();
          throw err;
        }
        if (this.closed) {
          shell.close();
          ends.close();
        } else {
          this.shell = shell;
          this.ends = ends;
          this.failures = 0;
        }
      } catch (err) {
        this.failures++;
        this.logger?.debug?.(`docker: resident exec shell in ${this.containerId.slice(0, 12)}: ${err instanceof Error ? err.message : String(err)}`);
        // A container just started can refuse the first try; try again shortly rather than only
        // on the next exec, up to MAX_START_FAILURES in a row.
        if (!this.closed && this.failures < MAX_START_FAILURES) setTimeout(() => this.ensure(), RETRY_MS * this.failures).unref();
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
  tryStart(command: string[], tty: boolean, events: ExecStreamEvents, fallback: () => ExecStream): ExecStream | null {
    if (tty || this.closed) return null;
    const shell = this.shell;
    const ends = this.ends;
    if (!shell?.running || !ends) {
      this.ensure();
      return null;
    }
    if (command.some((a) => a.includes('\n') || a.includes('\0'))) return null;
    return startResidentCommand(shell, command, events, () => ends.take(), (err) => {
      // Not the shell's pipes: the container tampered with its shell, or its sh makes
      // here-documents as files. Either way this container's execs go through the Engine.
      this.logger?.warn(`docker: exec in ${this.containerId.slice(0, 12)}: ${err instanceof Error ? err.message : String(err)}; using the Engine's exec`);
      this.failures = MAX_START_FAILURES;
      if (this.shell === shell) {
        this.shell = null;
        this.ends?.close();
        this.ends = null;
      }
      shell.close();
      return fallback();
    });
  }

  /** Ends the shell (the task stopped or the agent shuts down). */
  close(): void {
    this.closed = true;
    this.shell?.close();
    this.shell = null;
    this.ends?.close();
    this.ends = null;
  }
}

/**
 * Runs `command` through the shell once its pipes are made: until then (and for good, should
 * taking the ends fail, when `refused` gives the stream to use instead) what the session asks
 * is queued.
 */
function startResidentCommand(shell: ResidentShell, command: string[], events: ExecStreamEvents, take: () => PipeEnds, refused: (err: unknown) => ExecStream): ExecStream {
  let target: ExecStream | undefined;
  let killed = false;
  const pending: Array<(s: ExecStream) => void> = [];
  const settle = (s: ExecStream): void => {
    target = s;
    for (const op of pending.splice(0)) op(s);
  };
  shell.run(command, {
    onPipes() {
      if (killed) {
        // Ended while it waited: nothing is run, and the session ends as a killed command.
        queueMicrotask(() => events.onExit(137));
        return null;
      }
      let ends: PipeEnds;
      try {
        ends = take();
      } catch (err) {
        settle(refused(err));
        return null;
      }
      const started = attachResidentCommand(shell, ends, events);
      settle(started.stream);
      return started.requestEvents;
    },
    onAbandoned() {
      if (killed) events.onExit(137);
      else {
        events.onOutput('stderr', Buffer.from('the container\'s exec shell ended\n'));
        events.onExit(127);
      }
    },
  });
  const call = (op: (s: ExecStream) => void): void => {
    if (target) op(target);
    else pending.push(op);
  };
  return {
    write: (data) => call((s) => s.write(data)),
    closeStdin: () => call((s) => s.closeStdin()),
    resize: () => { /* no terminal: tty sessions use the Engine's exec */ },
    kill: () => {
      if (target) target.kill();
      else killed = true;
    },
  };
}

/** Binds a command's pipe ends (the shell is about to run it) to the session's `events`. */
function attachResidentCommand(shell: ResidentShell, ends: PipeEnds, events: ExecStreamEvents): { stream: ExecStream; requestEvents: ShellRequestEvents } {
  // libuv polls the pipes (no reads on the thread pool).
  const out = new Socket({ fd: ends.stdout, readable: true, writable: false });
  const err = new Socket({ fd: ends.stderr, readable: true, writable: false });
  const stdin = new Socket({ fd: ends.stdin, readable: false, writable: true });
  let open = 2;
  let code: number | null = null;
  let pid = 0;
  let killed = false;
  let exited = false;

  const finish = () => {
    if (exited || code === null || open > 0) return;
    exited = true;
    stdin.destroy();
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
  const requestEvents: ShellRequestEvents = {
    onPid(p) {
      pid = p;
      if (killed) shell.kill(pid);
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
  };
  const stream: ExecStream = {
    write(data) {
      if (!exited && stdin.writable) stdin.write(data);
    },
    closeStdin() {
      // The command sees end-of-file once what was written is in the pipe: the agent holds
      // its only writer.
      if (!exited) stdin.end();
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
  return { stream, requestEvents };
}
