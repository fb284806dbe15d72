import { systemClock, type Clock, type FakeClock } from '../../src/time/clock.js';

/**
 * A clock that reads "now" from `fake` but arms real Node.js timers (the system clock's): a
 * component's long timers are then real timers, while the dates it computes stay those of a
 * test's FakeClock.
 */
export function realTimersAt(fake: FakeClock): Clock {
  return { now: () => fake.now(), setTimer: (ms, fn) => systemClock.setTimer(ms, fn), sleep: (ms, s) => systemClock.sleep(ms, s) };
}

/** Lets real time pass. */
export const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Past Node.js's 2^31−1 ms timer limit: about 30 days. */
export const LONG_MS = 30 * 24 * 3600 * 1000;
