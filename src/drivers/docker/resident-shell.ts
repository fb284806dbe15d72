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
 *   agent → shell   R <id> <fifo base> '<arg0>' '<arg1>' …   start a command (each arg single-quoted)
 *                   K <pid>                                  SIGKILL a command (its session ended)
 *   shell → agent   P <id> <pid>                             started; its pid, for K
 *                   X <id> <code>                            exited (128+n for signal n)
 *
 * The command's stdin, stdout and stderr are the FIFOs of the request (exec-fifos.ts), opened by
 * the agent before it sends the request. The shell opens all three before it answers P, and the
 * agent keeps its end of stdin open until then: a FIFO whose only writer closed before the
 * reader came would block the reader's open for ever (and lose what was written) — an exec with
 * stdin closed early would never end. A command that is not in $PATH (or not executable) is
 * reported as Docker reports it: 126 and runc's message.
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
echo READY
while IFS= read -r l; do
  case $l in
  K\\ *) kill -9 \${l#K } 2>/dev/null ;;
  R\\ *)
    eval "set -- \${l#R }"; i=$1; f=$2; shift 2
    (
      exec 4<"$f.i" 5>"$f.o" 6>"$f.e"
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
    ;;
  esac
done
`;

/** Single-quotes `s` for sh: ' becomes '\''. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What a request is told. */
export interface ShellRequestEvents {
  onPid(pid: number): void;
  onExit(code: number): void;
}

/** How long the shell may take to come up before the container is given up on for now. */
const READY_TIMEOUT_MS = 10_000;

/** One resident shell in one container. */
export class ResidentShell {
  private nextId = 1;
  private readonly requests = new Map<number, ShellRequestEvents>();
  private line = '';
  private alive = true;

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
      return shell;
    })();
  }

  get running(): boolean {
    return this.alive;
  }

  /** Asks the shell to run `command` on the FIFOs named `base`; the answers go to `events`. */
  run(base: string, command: string[], events: ShellRequestEvents): void {
    const id = this.nextId++;
    this.requests.set(id, events);
    this.socket.write(`R ${id} ${shQuote(`/secrets/.caravan-exec/${base}`)} ${command.map(shQuote).join(' ')}\n`);
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
    this.onGone();
  }
}
