/**
 * Anonymous pipes (pipe(2)) for exec commands' stdin, stdout and stderr, as Nomad's executor
 * gives them (Go's os.Pipe). Node cannot make one: spawn's 'pipe' stdio is a unix socket pair
 * (libuv's uv_socketpair), and a socket cannot be opened again by path, so `cat /dev/stdin` or
 * `tar --file=/dev/stdin` in the command failed with ENXIO; a named FIFO can, but an open of
 * one whose writer has gone blocks for ever.
 *
 * So a long-lived /bin/sh makes them: a here-document with a quoted delimiter that fits the
 * pipe buffer is a pipe the shell fills and closes without forking (dash, busybox ash, bash
 * ≥ 5.1). On request the shell puts seven such pipes at fds 3–9 and answers a line; this
 * process opens /proc/<sh>/fd/N once for reading and once for writing — for an anonymous pipe
 * both opens give new descriptions of that same pipe, never blocking — and then has the shell
 * close its own. This process then holds both ends of seven pipes of its own, no other process
 * holds either end, and it hands them out from a small stock (about 0.1 ms of the shell's time
 * per seven, off the sessions' path). If the shell's here-documents are not pipes, or the shell
 * cannot be had, the stock reports itself unsupported and commands get Node's sockets as before.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants as C, fstatSync, openSync } from 'node:fs';

/** Both ends of one pipe, owned by the taker (close-on-exec, as Node opens everything). */
export interface AnonymousPipe {
  read: number;
  write: number;
}

/** The fds the shell puts its pipes at: dash takes one digit in a redirection. */
const FDS = [3, 4, 5, 6, 7, 8, 9];

/** Below this many pipes in stock a batch is asked for; batches are asked for up to HIGH. */
const LOW = 12;
const HIGH = 21;

/** Reads a line; `m` closes the last batch and makes a new one (answering a line), anything else only closes. */
const SCRIPT = `while IFS= read -r l; do
exec 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&-
[ "$l" = m ] || continue
${FDS.map((fd) => `exec ${fd}<<'E'\nE\n`).join('')}echo
done`;

/** A stock of anonymous pipes, refilled in the background. */
export class PipeStock {
  private readonly pipes: AnonymousPipe[] = [];
  private maker: ChildProcess | null = null;
  private asking = false;
  private unsupported = false;
  /** Whether a shell ever answered: one that dies after that (killed from outside) is replaced. */
  private worked = false;
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  /**
   * `count` pipes taken from the stock, or null when it has fewer (a refill is under way:
   * `ready()`) or pipes cannot be made here (`supported` is false).
   */
  take(count: number): AnonymousPipe[] | null {
    const got = this.pipes.length >= count ? this.pipes.splice(0, count) : null;
    this.refill();
    return got;
  }

  /** False once it is known that no pipes can be made (commands then get sockets). */
  get supported(): boolean {
    return !this.unsupported;
  }

  /**
   * Resolves once `count` pipes are in stock (another taker may still be first), or it is
   * known that none can be made.
   */
  ready(count = 3): Promise<void> {
    if (this.pipes.length >= count || this.unsupported) return Promise.resolve();
    this.refill();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  /** Ends the shell and closes every pipe still in stock. */
  close(): void {
    this.fail();
    for (const p of this.pipes.splice(0)) closeBoth(p);
  }

  /** Asks the shell for a batch unless one is on its way or the stock is full enough. */
  private refill(): void {
    if (this.asking || this.unsupported || this.pipes.length >= LOW) return;
    const maker = this.shell();
    if (!maker) return;
    this.asking = true;
    this.hold(true);
    maker.stdin!.write('m\n');
  }

  /** The shell's answer: its batch is at fds 3–9. */
  private answered(maker: ChildProcess): void {
    const batch: AnonymousPipe[] = [];
    try {
      for (const fd of FDS) {
        const path = `/proc/${maker.pid}/fd/${fd}`;
        const read = openSync(path, C.O_RDONLY);
        let write: number;
        try {
          write = openSync(path, C.O_WRONLY);
        } catch (err) {
          closeSync(read);
          throw err;
        }
        batch.push({ read, write });
        // A shell whose here-documents are files (bash before 5.1) makes no pipes.
        if (!fstatSync(read).isFIFO()) throw new Error('here-documents are not pipes');
      }
    } catch {
      for (const p of batch) closeBoth(p);
      this.fail();
      return;
    }
    this.pipes.push(...batch);
    this.worked = true;
    this.asking = false;
    const more = this.pipes.length < HIGH;
    if (more) this.asking = true;
    else this.hold(false);
    // The shell closes its copies before anything else: from now on only this process holds them.
    maker.stdin!.write(more ? 'm\n' : 'c\n');
    this.wake();
  }

  private shell(): ChildProcess | null {
    if (this.maker) return this.maker;
    let maker: ChildProcess;
    try {
      maker = spawn('/bin/sh', ['-c', SCRIPT], { stdio: ['pipe', 'pipe', 'ignore'] });
    } catch {
      this.fail();
      return null;
    }
    let line = '';
    maker.stdout!.on('data', (d: Buffer) => {
      line += d.toString('latin1');
      let nl: number;
      while ((nl = line.indexOf('\n')) >= 0) {
        line = line.slice(nl + 1);
        if (this.maker === maker) this.answered(maker);
      }
    });
    const gone = (): void => {
      if (this.maker !== maker) return;
      if (!this.worked) return this.fail();
      // The next shell must answer before it, too, is replaced.
      this.worked = false;
      this.maker = null;
      this.asking = false;
      this.refill();
    };
    maker.on('error', gone);
    maker.on('exit', gone);
    maker.stdin!.on('error', gone);
    this.maker = maker;
    this.hold(false);
    return maker;
  }

  /**
   * Keeps the event loop alive for the shell's answer only while one is awaited: the shell
   * must not keep a process (the agent, a test) alive by itself.
   */
  private hold(waiting: boolean): void {
    const m = this.maker;
    if (!m) return;
    for (const s of [m.stdin, m.stdout] as Array<{ ref?: () => void; unref?: () => void } | null>) {
      if (waiting) s?.ref?.();
      else s?.unref?.();
    }
    if (waiting) m.ref();
    else m.unref();
  }

  private fail(): void {
    this.unsupported = true;
    this.asking = false;
    const m = this.maker;
    this.maker = null;
    if (m && m.exitCode === null && m.signalCode === null) m.kill('SIGKILL');
    this.wake();
  }

  /** Resolves the waiters the stock now has enough for (all of them once none can be made). */
  private wake(): void {
    const waiting = this.waiters.splice(0);
    for (const w of waiting) {
      if (this.unsupported || this.pipes.length >= w.count) w.resolve();
      else this.waiters.push(w);
    }
    if (this.waiters.length > 0) this.refill();
  }
}

function closeBoth(p: AnonymousPipe): void {
  closeSync(p.read);
  closeSync(p.write);
}

let shared: PipeStock | undefined;

/** This process's stock, made on first use. */
export function sharedPipeStock(): PipeStock {
  shared ??= new PipeStock();
  return shared;
}
