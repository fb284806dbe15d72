/**
 * The clock a lease's confirmation is measured on: milliseconds of the process's monotonic clock
 * (CLOCK_MONOTONIC through process.hrtime), the same on every thread of the process. Wall-clock
 * time (Date.now()) can step — NTP, a VM resumed, an operator — and a step back would make an
 * unconfirmed lease look confirmed for as long as the step: a leader that should have stepped
 * down would keep leading (its writes stay fenced, but it would answer as leader). Nor is
 * performance.timeOrigin + performance.now() a shared clock: each thread takes its own
 * timeOrigin from the wall clock when it starts, so two threads' sums differ by any step between
 * their starts. The values only mean something relative to each other, within one process.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}
