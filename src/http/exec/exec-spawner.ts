/**
 * Starts exec commands from a small helper process (exec-spawner-main.ts) instead of the agent:
 * fork() copies the page tables of the process that forks, so a command forked from the agent
 * (100+ MB) takes 5–12 ms to start where the helper takes under 1 ms — the bulk of an exec round
 * trip (measured per step: upgrade 0.7 ms, route 0.2 ms, spawn 10–17 ms, output and exit ~1 ms).
 * Nomad likewise forks from a small executor. The helper is forked on first use and kept; if it
 * dies, its sessions end with exit code 127 and the next session forks a new one.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ExecSpec } from '../../drivers/driver.js';
import type { ExecProcess, ExecProcessEvents } from './exec-process.js';
import type { SpawnerEvent, SpawnerRequest } from './exec-spawner-protocol.js';

const MAIN = fileURLToPath(new URL('./exec-spawner-main.js', import.meta.url));

/** One helper process and the sessions it runs. */
export class ExecSpawner {
  private child: ChildProcess | null = null;
  private nextId = 1;
  private readonly sessions = new Map<number, ExecProcessEvents>();
  private closed = false;

  /** Starts `spec` (a pseudo-terminal when `tty`) in the helper. */
  start(spec: ExecSpec, tty: boolean, events: ExecProcessEvents): ExecProcess {
    const id = this.nextId++;
    let exited = false;
    const child = this.helper();
    const send = (msg: SpawnerRequest): void => {
      if (!exited && child.connected) child.send(msg);
    };
    this.sessions.set(id, {
      onOutput: (s, d) => events.onOutput(s, d),
      onExit: (code) => {
        exited = true;
        this.holdOpen();
        events.onExit(code);
      },
    });
    this.holdOpen();
    send({ op: 'start', id, file: spec.file, args: spec.args, cwd: spec.cwd, env: spec.env, tty, ...(spec.killSignal ? { killSignal: spec.killSignal } : {}), ...(spec.stdioOwner ? { stdioOwner: spec.stdioOwner } : {}), ...(tty && spec.relayedTerminal ? { relayedTerminal: spec.relayedTerminal } : {}) });
    return {
      write: (data) => send({ op: 'stdin', id, data }),
      closeStdin: () => send({ op: 'closeStdin', id }),
      resize: (size) => send({ op: 'resize', id, size }),
      kill: () => send({ op: 'kill', id }),
    };
  }

  /** Keeps the event loop alive for the helper's messages only while a session runs. */
  private holdOpen(): void {
    const channel = this.child?.channel as { ref?: () => void; unref?: () => void } | undefined;
    if (this.sessions.size > 0) channel?.ref?.();
    else channel?.unref?.();
  }

  /** Stops the helper; its running commands are killed. */
  close(): void {
    this.closed = true;
    if (this.child?.connected) this.child.disconnect();
    this.child = null;
    this.endAll('exec helper stopped');
  }

  /** Ends every session: their commands are gone with the helper. */
  private endAll(why: string): void {
    for (const [id, s] of this.sessions) {
      this.sessions.delete(id);
      s.onOutput('stderr', Buffer.from(`${why}\n`));
      s.onExit(127);
    }
  }

  private helper(): ChildProcess {
    if (this.child?.connected) return this.child;
    if (this.closed) throw new Error('exec spawner is closed');
    const child = fork(MAIN, [], {
      serialization: 'advanced',
      execArgv: ['--optimize-for-size'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.on('message', (ev: SpawnerEvent) => {
      const s = this.sessions.get(ev.id);
      if (!s) return;
      if (ev.op === 'output') s.onOutput(ev.stream, Buffer.from(ev.data.buffer, ev.data.byteOffset, ev.data.byteLength));
      else {
        this.sessions.delete(ev.id);
        s.onExit(ev.code);
      }
    });
    const gone = (): void => {
      if (this.child !== child) return;
      this.child = null;
      this.endAll('exec helper exited');
    };
    child.on('exit', gone);
    child.on('error', gone);
    // The helper must not keep the agent (or a test) alive by itself: its channel is held open
    // only while a session runs (holdOpen).
    child.unref();
    this.child = child;
    return child;
  }
}
