/**
 * Stops what the node simulator bench started — the simulator, the `caravan agent -server`
 * processes, etcd, its directories — on every way out: the end of the run, an error it throws,
 * an exception or rejection nobody caught (a simulated client's timer), SIGINT and SIGTERM.
 * The servers are child processes of the bench, not of a terminal's process group, so a bench
 * killed by a signal or crashed by an uncaught error used to leave them running.
 *
 * Steps run once, newest first (what was started last stops first), each on its own: one that
 * throws or hangs (past `stepTimeoutMs`) is reported and the others still run.
 */

/** One thing to stop. */
interface Step {
  what: string;
  run: () => Promise<void> | void;
}

/** Signals the bench stops its processes on, with the exit code a shell gives them (128 + n). */
const SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;

/** The bench's teardown (see the file comment). */
export class BenchTeardown {
  private readonly steps: Step[] = [];
  private running: Promise<void> | null = null;

  /** @param stepTimeoutMs how long one step may take before the next runs regardless. */
  constructor(
    private readonly log: (line: string) => void = (line) => console.error(line),
    private readonly stepTimeoutMs = 30_000,
  ) {}

  /** Registers a step; call it as soon as the thing is started (before anything that may throw). */
  add(what: string, run: () => Promise<void> | void): void {
    this.steps.push({ what, run });
  }

  /** Runs every step once, newest first; later calls answer the same promise. Never rejects. */
  run(): Promise<void> {
    this.running ??= this.runSteps();
    return this.running;
  }

  /**
   * Makes SIGINT, SIGTERM, an uncaught exception and an unhandled rejection run the teardown,
   * then exit (130 / 143 for the signals, 1 for an error). A second signal while it runs exits
   * at once. Call once, at the start of the bench.
   */
  installExitHandlers(): void {
    for (const [signal, code] of Object.entries(SIGNALS)) {
      process.on(signal, () => {
        if (this.running) {
          this.log(`nodesim: ${signal} again: exiting without waiting for the teardown`);
          process.exit(code);
        }
        this.log(`nodesim: ${signal}: stopping what the bench started`);
        void this.run().finally(() => process.exit(code));
      });
    }
    const crash = (err: unknown): void => {
      this.log(`nodesim: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      void this.run().finally(() => process.exit(1));
    };
    process.on('uncaughtException', crash);
    process.on('unhandledRejection', crash);
  }

  private async runSteps(): Promise<void> {
    for (const step of [...this.steps].reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.stepTimeoutMs);
      });
      try {
        const outcome = await Promise.race([Promise.resolve().then(step.run), timeout]);
        if (outcome === 'timeout') this.log(`nodesim: stopping ${step.what} took over ${this.stepTimeoutMs} ms; going on`);
      } catch (err) {
        this.log(`nodesim: stopping ${step.what} failed: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
