/**
 * The server's log of client introduction violations (introductionVerdict's lines), kept useful
 * when a whole fleet registers without tokens. Nomad logs one line per registration (WARN under
 * "warn", ERROR under "strict") and counts them in `nomad.client.introduction_violation_num`;
 * 10,000 clients starting under the default "warn" make that 10,000 lines in a minute, which bury
 * everything else and tell the operator nothing the first few did not.
 *
 * Here each message (with its level) is logged in full, node by node, for the first
 * INTRODUCTION_LOG_BURST times in a window of INTRODUCTION_LOG_WINDOW_MS; further ones in that
 * window are counted, and when the window ends one line of the same level and message says how
 * many were left out (`suppressed`), with the fields of the last one. Every violation is counted
 * (violations()), whether logged or not. A window is opened by a line and closed by a timer on the
 * given clock; close() ends every open window at once (its summary is logged).
 */
import type { Clock, Timer } from '../../time/clock.js';

/** Lines of one message logged in full per window. */
export const INTRODUCTION_LOG_BURST = 10;

/** The window, in ms, over which INTRODUCTION_LOG_BURST lines of a message are logged in full. */
export const INTRODUCTION_LOG_WINDOW_MS = 60_000;

/** One line to log: a level, Nomad's message and its fields. */
export interface IntroductionLogLine {
  level: 'warn' | 'error';
  message: string;
  fields: Record<string, string>;
}

/** Where lines go (a pino logger has these). */
export interface IntroductionLogSink {
  warn(fields: Record<string, string | number>, message: string): void;
  error(fields: Record<string, string | number>, message: string): void;
}

interface Window {
  logged: number;
  suppressed: number;
  last: IntroductionLogLine;
  timer: Timer;
}

/** The throttled log of introduction violations (see the file comment). Not safe to share between servers. */
export class IntroductionLog {
  private readonly windows = new Map<string, Window>();
  private total = 0;

  /** @param sink read at each line (the server's logger; undefined: lines are only counted). */
  constructor(
    private readonly sink: () => IntroductionLogSink | undefined,
    private readonly clock: Clock,
    private readonly burst = INTRODUCTION_LOG_BURST,
    private readonly windowMs = INTRODUCTION_LOG_WINDOW_MS,
  ) {}

  /** Counts one violation and logs it, unless its message's window has had its burst already. */
  record(line: IntroductionLogLine): void {
    this.total++;
    const key = `${line.level}\u0000${line.message}`;
    let w = this.windows.get(key);
    if (!w) {
      w = { logged: 0, suppressed: 0, last: line, timer: this.clock.setTimer(this.windowMs, () => this.end(key)) };
      // A pending count line must not keep a server's process alive: close() writes it anyway.
      w.timer.unref?.();
      this.windows.set(key, w);
    }
    w.last = line;
    if (w.logged < this.burst) {
      w.logged++;
      this.sink()?.[line.level](line.fields, line.message);
    } else {
      w.suppressed++;
    }
  }

  /** Violations recorded since the server started, logged or not (Nomad's introduction_violation_num). */
  violations(): number {
    return this.total;
  }

  /** Ends every open window now, logging what each left out. */
  close(): void {
    for (const key of [...this.windows.keys()]) this.end(key);
  }

  private end(key: string): void {
    const w = this.windows.get(key);
    if (!w) return;
    this.windows.delete(key);
    w.timer.cancel();
    if (w.suppressed === 0) return;
    const seconds = Math.round(this.windowMs / 1000);
    this.sink()?.[w.last.level](
      { ...w.last.fields, suppressed: w.suppressed },
      `${w.last.message}: ${w.suppressed} more not logged one by one (at most ${this.burst} in ${seconds}s; fields of the last)`,
    );
  }
}
