/**
 * An `iptables-restore -w --noflush` started ahead of time and left waiting on its standard
 * input, so the process start — fork, exec, the dynamic linker, the iptables libraries — is
 * not on an allocation's path: `apply` writes the ruleset text to it and closes its input
 * (issue 29: on this project's 2-core VM the start is 10–13 ms of a ~14 ms restore on a quiet
 * machine, 20–30 ms under load, against ~2–9 ms for the ruleset itself).
 *
 * Why a waiting process holds nothing: iptables-restore takes the xtables lock (legacy backend,
 * `-w`) only when it reads a `*table` line, and the nft backend reads the ruleset from the kernel
 * when it parses the text, not at start — a standby started before other changes applies its
 * text against the rules as they are when the text arrives. A standby whose input closes without
 * text (the agent killed) exits changing nothing.
 *
 * One standby is kept; `apply` with none ready (taken, dead, not started yet) starts a process
 * then, as before. The replacement is started in the background once `beforeSpawn` resolves
 * (the owner holds it back while a set-up is under way: a process start competes for the CPU).
 * Not concurrent-safe per standby by construction: each `apply` takes the standby it uses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { IptablesError, iptablesRestore } from './iptables-restore.js';

/** The tools answer in milliseconds; a hung one must not hang a set-up forever. */
const TIMEOUT_MS = 30_000;

interface Standby {
  child: ChildProcess;
  /** Settles when the process has exited: its exit code (null when killed) and what it printed. */
  exited: Promise<{ code: number | null; stderr: string }>;
  /** Whether the process exited or failed before being used (it cannot take text then). */
  dead: boolean;
}

export interface StandbyIptablesRestoreOptions {
  /** Awaited before each replacement is started: lets the owner hold it back while it has urgent work. */
  beforeSpawn?: () => Promise<void>;
}

export class StandbyIptablesRestore {
  private standby: Standby | null = null;
  private spawning: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly opts: StandbyIptablesRestoreOptions = {}) {}

  /** Whether a standby process is ready now. */
  get ready(): boolean {
    const s = this.standby;
    return s !== null && !s.dead && s.child.exitCode === null && s.child.signalCode === null;
  }

  /**
   * Applies `text` as iptablesRestore does (atomic per table; rejects with an IptablesError
   * carrying what the tool printed), through the standby process when one is ready. Starts the
   * replacement in the background.
   */
  async apply(text: string): Promise<void> {
    const s = this.standby;
    this.standby = null;
    this.refill();
    // One that exited on its own (killed behind the client's back) never saw the text: a new process gets it.
    if (!s || s.dead || s.child.exitCode !== null || s.child.signalCode !== null) return iptablesRestore(text);
    // Held again while it works: the caller awaits it.
    s.child.ref();
    refStream(s.child.stderr);
    const timer = setTimeout(() => s.child.kill('SIGKILL'), TIMEOUT_MS);
    try {
      s.child.stdin?.end(text);
      const { code, stderr } = await s.exited;
      if (code !== 0) throw new IptablesError('iptables-restore', stderr.trim() || `exited with ${code === null ? 'a signal' : `code ${code}`}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Starts a standby in the background when none is ready (no-op when closed or already starting). */
  refill(): void {
    if (this.closed || this.spawning || this.ready) return;
    this.spawning = (async () => {
      await this.opts.beforeSpawn?.();
      if (this.closed || this.ready) return;
      this.standby = startStandby();
    })().finally(() => {
      this.spawning = null;
    });
  }

  /** Resolves once the replacement under way (if any) has been started. */
  async settled(): Promise<void> {
    await this.spawning;
  }

  /** Stops keeping a standby and ends the idle one (its input closes: it applies nothing). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await this.spawning;
    const s = this.standby;
    this.standby = null;
    if (!s || s.dead) return;
    refStream(s.child.stderr);
    s.child.ref();
    s.child.stdin?.end();
    await s.exited;
  }
}

/** Starts `iptables-restore -w --noflush` waiting for its text; it does not keep the process alive. */
function startStandby(): Standby {
  const child = spawn('iptables-restore', ['-w', '--noflush'], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  const s: Standby = {
    child,
    dead: false,
    exited: new Promise((resolve) => {
      child.on('error', (err) => {
        s.dead = true;
        resolve({ code: null, stderr: err.message });
      });
      child.on('close', (code) => {
        s.dead = true;
        resolve({ code, stderr });
      });
    }),
  };
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  // A write to a process that died meanwhile fails with EPIPE: its exit code reports it.
  child.stdin?.on('error', () => undefined);
  // Idle, it must not keep the agent (or a test) running.
  child.unref();
  unrefStream(child.stdin);
  unrefStream(child.stderr);
  return s;
}

function unrefStream(stream: unknown): void {
  (stream as { unref?: () => void } | null)?.unref?.();
}

function refStream(stream: unknown): void {
  (stream as { ref?: () => void } | null)?.ref?.();
}
