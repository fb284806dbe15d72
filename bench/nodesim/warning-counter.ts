/**
 * A pino logger for the simulated clients that prints nothing and counts its warnings by
 * message: the bench reads how many heartbeats failed (and were retried on the next server)
 * without 10,000 clients' log lines in its output or its memory.
 */
import { pino, type Logger } from 'pino';

/** The logger and the count of each warning (or worse) message it received. */
export interface WarningCounter {
  logger: Logger;
  /** How many times `msg` was logged at warn or above. */
  count(msg: string): number;
  /** Every message counted so far. */
  all(): Record<string, number>;
}

/**
 * Creates a counting logger (level "warn": debug and info lines are never formatted).
 * `onCount` is called after each counted line (a simulator thread forwards its counts then).
 */
export function warningCounter(onCount?: () => void): WarningCounter {
  const counts = new Map<string, number>();
  const logger = pino(
    { level: 'warn', base: null, timestamp: false },
    {
      write(line: string) {
        const msg = (JSON.parse(line) as { msg?: unknown }).msg;
        if (typeof msg === 'string') counts.set(msg, (counts.get(msg) ?? 0) + 1);
        onCount?.();
      },
    },
  );
  return { logger, count: (msg) => counts.get(msg) ?? 0, all: () => Object.fromEntries(counts) };
}
