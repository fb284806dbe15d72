/**
 * Keeps one warm shell (warm-shell.ts) per task that has had an exec session lately, so the next
 * session in that task skips the fork. The first session of a task is cold; a used shell is
 * replaced once the spawner has been idle for a moment. Shells idle for IDLE_MS are ended,
 * and at most MAX_KEYS tasks are kept warm, so a quiet agent holds no shells at all.
 */
import type { ExecSpec } from '../../drivers/driver.js';
import { takeCommandPipes } from './command-pipes.js';
import { sharedPipeStock, type PipeStock } from './pipe-stock.js';
import { commandLine, warmKey, WarmShell, type ShellSpec, type StartedCommand } from './warm-shell.js';

/** How long an unused warm shell is kept. Poseidon execs into its runners every few seconds. */
const IDLE_MS = 120_000;
/** Tasks kept warm at once; the least recently used is dropped beyond it. */
const MAX_KEYS = 64;
/** Quiet time after the last session start or end before shells are forked. */
const REFILL_IDLE_MS = 5;

interface Entry {
  shell: WarmShell;
  timer: NodeJS.Timeout;
}

export class WarmShellPool {
  /** Insertion order is use order: the first key is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  /** Tasks whose warm shell was used and is to be replaced once the spawner is idle. */
  private readonly wanted = new Map<string, ShellSpec>();
  private refillTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /** `stock` gives the shells' pipes (a shell on pipes is forked only once they are in stock). */
  constructor(private readonly stock: PipeStock = sharedPipeStock()) {}

  /**
   * Starts `spec` (on a terminal when `tty`; its env as the command gets it) on a warm shell
   * when one is ready for its task, else returns undefined and the caller spawns it cold.
   * Either way the task is warmed for its next session.
   */
  start(spec: ExecSpec, tty: boolean): StartedCommand | undefined {
    const shellSpec: ShellSpec = { cwd: spec.cwd, env: spec.env, tty, stdioOwner: spec.stdioOwner };
    const key = warmKey(shellSpec);
    this.wanted.set(key, shellSpec);
    this.busy();
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const line = commandLine(spec);
    if (line === undefined) return undefined;
    this.entries.delete(key);
    clearTimeout(entry.timer);
    if (!entry.shell.alive) {
      entry.shell.discard();
      return undefined;
    }
    return entry.shell.run(line);
  }

  /**
   * Notes activity (a session started or ended). Forking a shell blocks this process for about
   * a millisecond and takes CPU the running sessions need, so shells are forked only once no
   * session has started or ended for REFILL_IDLE_MS.
   */
  busy(): void {
    if (this.closed || this.wanted.size === 0) return;
    clearTimeout(this.refillTimer);
    this.refillTimer = setTimeout(() => this.refill(), REFILL_IDLE_MS).unref();
  }

  /** Ends every warm shell. */
  close(): void {
    this.closed = true;
    clearTimeout(this.refillTimer);
    this.wanted.clear();
    for (const e of this.entries.values()) this.drop(e);
    this.entries.clear();
  }

  private refill(): void {
    for (const [key, spec] of this.wanted) {
      this.wanted.delete(key);
      if (this.closed || this.entries.has(key)) continue;
      const pipes = spec.tty ? null : takeCommandPipes(this.stock, spec.stdioOwner);
      if (pipes === 'wait') {
        // Forked once the stock is refilled (for the next session), not on sockets now.
        this.wanted.set(key, spec);
        void this.stock.ready().then(() => this.busy());
        return;
      }
      const shell = WarmShell.start(spec, pipes ?? undefined);
      if (!shell) continue;
      const entry: Entry = { shell, timer: setTimeout(() => this.expire(key, entry), IDLE_MS).unref() };
      this.entries.set(key, entry);
      if (this.entries.size > MAX_KEYS) {
        const [oldestKey, oldest] = this.entries.entries().next().value as [string, Entry];
        this.entries.delete(oldestKey);
        this.drop(oldest);
      }
    }
  }

  private expire(key: string, entry: Entry): void {
    if (this.entries.get(key) !== entry) return;
    this.entries.delete(key);
    this.drop(entry);
  }

  private drop(entry: Entry): void {
    clearTimeout(entry.timer);
    entry.shell.discard();
  }
}
