/**
 * The resident exec shell: the fast path of alloc exec into a runc container. The Engine's exec
 * costs ~50 ms per command (dockerd → containerd → shim → runc exec); nearly all of it is the
 * runtime. So per container the driver starts ONE long-lived `/bin/sh` through the Engine's exec
 * — it and every command it starts have exactly Docker's exec context (seccomp filter,
 * capabilities, AppArmor profile, user, cgroup, environment, working dir) — and then asks it to
 * start each command, a fork and exec in the container (a few ms).
 *
 * Requests go in on the shell's stdin and answers come back on its stdout, over the Engine's
 * exec stream itself (nothing the container could plant in between):
 *
 *   agent → shell   N <id>                                   make the pipes of a command
 *   shell → agent   F <id>                                   they are at fds 7, 8, 9
 *   agent → shell   R <id> '<arg0>' '<arg1>' …               run it on them (each arg single-quoted)
 *                   K <pid>                                  SIGKILL a command (its session ended)
 *   shell → agent   P <id> <pid>                             started; its pid, for K
 *                   X <id> <code>                            exited (128+n for signal n)
 *
 * The command's stdin, stdout and stderr are anonymous pipes, as runc gives an exec (a command
 * can reopen /dev/stdin, and sees end-of-file when the caller closes it): the shell makes three
 * with here-documents (a pipe, no fork, in ash, dash and bash ≥ 5.1), turns the last two into
 * write ends by reopening them through /proc/self/fd (so the agent's readers never see a pipe
 * without a writer, which reads as end-of-file) and answers F; the agent opens its ends through
 * /proc (shell-pipe-ends.ts) and only then sends R, so the command never meets a pipe without
 * the agent's end. One command's pipes are made at a time (the agent
 * queues N). A command that is not in $PATH (or not executable) is reported as Docker reports
 * it: 126 and runc's message.
 */
import type { Socket } from 'node:net';
import type { EngineClient } from './engine-client.js';
import { StreamDemuxer } from './stream-demux.js';

/**
 * The loop (POSIX sh: busybox ash, dash, bash). Lines are parsed with eval only after the agent
 * single-quoted every argument, so no argument is ever interpreted. `exec` (never a builtin or a
 * function of this script) runs the command with fd 3 — the answer channel — closed.
 */
export const RESIDENT_SHELL_SCRIPT = `set -f
exec 3>&1
found() {
  case $1 in */*) [ -f "$1" ] && [ -x "$1" ]; return ;; esac
  o=$IFS; IFS=:
  for p in $PATH; do
    if [ -f "\${p:-.}/$1" ] && [ -x "\${p:-.}/$1" ]; then IFS=$o; return 0; fi
  done
  IFS=$o; return 1
}
[ -d /proc/self/fd ] || { echo NOPROC; exit 1; }
echo READY
while IFS= read -r l; do
  case $l in
  K\\ *) kill -9 \${l#K } 2>/dev/null ;;
  N\\ *)
exec 7<<'E'
E
exec 8<<'E'
E
exec 9<<'E'
E
    exec 8>/proc/self/fd/8 9>/proc/self/fd/9
    echo "F \${l#N }" >&3 ;;
  R\\ *)
    eval "set -- \${l#R }"; i=$1; shift
    (
      exec 4<&7 5>&8 6>&9 7<&- 8>&- 9>&-
      if found "$1"; then
        exec "$@" <&4 >&5 2>&6 3>&- 4<&- 5>&- 6>&- &
        echo "P $i $!" >&3
        exec 4<&- 5>&- 6>&-
        wait $!; c=$?
      else
        echo "OCI runtime exec failed: exec failed: unable to start container process: exec: \\"$1\\": executable file not found in \\$PATH: unknown" >&5
        c=126
      fi
      echo "X $i $c" >&3
    ) &
    exec 7<&- 8>&- 9>&-
    ;;
  esac
done
`;

/** Single-quotes `s` for sh: ' becomes '\''. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What a running command's request is told. */
export interface ShellRequestEvents {
  onPid(pid: number): void;
  onExit(code: number): void;
}

/** A command waiting for its pipes. */
export interface ShellRequest {
  /**
   * The shell holds the command's pipes (at SHELL_PIPE_FDS): the caller takes its ends now and
   * answers the events of the running command, or null to drop the request (nothing is run).
   */
  onPipes(): ShellRequestEvents | null;
  /** The shell ended before the pipes were made: the command was not run. */
  onAbandoned(): void;
}

/** How long the shell may take to come up before the container is given up on for now. */
const READY_TIMEOUT_MS = 10_000;
/** How often, and how long apart, the exec's host pid is asked for while the Engine reports 0. */
const PID_POLLS = 40;
const PID_POLL_MS = 50;

/** One resident shell in one container. */
export class ResidentShell {
  private nextId = 1;
  private readonly requests = new Map<number, ShellRequestEvents>();
  /** Commands waiting for their pipes, first in line first; the first has had its N sent. */
  private readonly queued: Array<{ id: number; command: string[]; req: ShellRequest }> = [];
  private line = '';
  private alive = true;
  /** The shell's pid on the host (the Engine's exec inspection), for its /proc. */
  hostPid = 0;

  private constructor(
    private readonly socket: Socket,
    private readonly onGone: () => void,
  ) {}

  /**
   * Starts the shell in `containerId` through the Engine's exec. Rejects if it does not answer
   * READY (no /bin/sh in the image, the container stopped, …). `onGone` is called once when it
   * ends after that.
   */
  static start(engine: EngineClient, containerId: string, onGone: () => void): Promise<ResidentShell> {
    return (async () => {
      const created = await engine.json<{ Id: string }>({
        method: 'POST',
        path: `/containers/${containerId}/exec`,
        body: { AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false, Cmd: ['/bin/sh', '-c', RESIDENT_SHELL_SCRIPT] },
      });
      const socket = await engine.hijack({ method: 'POST', path: `/exec/${created.Id}/start`, body: { Detach: false, Tty: false } });
      const shell = new ResidentShell(socket, onGone);
      await new Promise<void>((resolve, reject) => {
        let ready = false;
        const timer = setTimeout(() => fail(new Error('the resident shell did not start in time')), READY_TIMEOUT_MS);
        const fail = (err: Error) => {
          clearTimeout(timer);
          socket.destroy();
          if (!ready) reject(err);
        };
        let stderr = '';
        const demux = new StreamDemuxer((stream, payload) => {
          if (stream === 'stderr') {
            stderr = (stderr + payload.toString()).slice(-500);
            return;
          }
          if (ready) return shell.read(payload.toString('latin1'));
          shell.line += payload.toString('latin1');
          const nl = shell.line.indexOf('\n');
          if (nl < 0) return;
          const first = shell.line.slice(0, nl);
          const rest = shell.line.slice(nl + 1);
          shell.line = '';
          if (first !== 'READY') return fail(new Error(`the resident shell answered ${JSON.stringify(first.slice(0, 200))}`));
          ready = true;
          clearTimeout(timer);
          resolve();
          if (rest) shell.read(rest);
        });
        socket.on('data', (d: Buffer) => demux.push(d));
        socket.on('error', () => undefined);
        socket.on('close', () => {
          if (!ready) fail(new Error(`the resident shell ended before it was ready${stderr ? `: ${stderr.trim()}` : ''}`));
          else shell.gone();
        });
      });
      // The Engine can still report Pid 0 for an exec whose process already answered READY (it
      // records the pid after the start returns): ask again for a moment before giving up.
      for (let i = 0; i < PID_POLLS && shell.hostPid <= 0; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, PID_POLL_MS));
        const info = await engine.json<{ Pid?: number }>({ method: 'GET', path: `/exec/${created.Id}/json` });
        shell.hostPid = info.Pid ?? 0;
      }
      return shell;
    })();
  }

  get running(): boolean {
    return this.alive;
  }

  /** Asks the shell to run `command`; `req` is told when its pipes are made (after those of earlier commands). */
  run(command: string[], req: ShellRequest): void {
    if (!this.alive) {
      queueMicrotask(() => req.onAbandoned());
      return;
    }
    this.queued.push({ id: this.nextId++, command, req });
    if (this.queued.length === 1) this.askPipes();
  }

  private askPipes(): void {
    const next = this.queued[0];
    if (next) this.socket.write(`N ${next.id}\n`);
  }

  /** The first queued command's pipes are ready: its owner takes its ends, then it is run. */
  private pipesMade(id: number): void {
    const first = this.queued[0];
    if (!first || first.id !== id) return;
    this.queued.shift();
    const events = first.req.onPipes();
    if (events) {
      this.requests.set(id, events);
      this.socket.write(`R ${id} ${first.command.map(shQuote).join(' ')}\n`);
    }
    this.askPipes();
  }

  /** SIGKILLs a command the shell started. */
  kill(pid: number): void {
    if (this.alive && Number.isInteger(pid) && pid > 1) this.socket.write(`K ${pid}\n`);
  }

  /** Ends the shell (its stdin closes, its loop ends); commands still running are left to end. */
  close(): void {
    this.socket.destroy();
  }

  private read(text: string): void {
    this.line += text;
    let nl: number;
    while ((nl = this.line.indexOf('\n')) >= 0) {
      const [op, id, value] = this.line.slice(0, nl).split(' ');
      this.line = this.line.slice(nl + 1);
      const req = this.requests.get(Number(id));
      const n = Number(value);
      if (op === 'F') {
        this.pipesMade(Number(id));
        continue;
      }
      if (!req || !Number.isInteger(n)) continue;
      if (op === 'P') req.onPid(n);
      else if (op === 'X') {
        this.requests.delete(Number(id));
        req.onExit(n);
      }
    }
  }

  private gone(): void {
    if (!this.alive) return;
    this.alive = false;
    // Their exit codes can no longer be had: the sessions end as the exec spawner's do when it dies.
    for (const [id, req] of this.requests) {
      this.requests.delete(id);
      req.onExit(-1);
    }
    for (const q of this.queued.splice(0)) q.req.onAbandoned();
    this.onGone();
  }
}
