/**
 * A template's `wait { min max }` (consul-template's quiescence): a re-render is held until its
 * data has stopped changing for `min`, or until `max` after the first change it holds, so a
 * flapping variable does not rewrite the file (and restart the task) at every change.
 */
import type { Clock, Timer } from '../../time/clock.js';

export class Quiescence {
  private timer: Timer | null = null;
  private deadline = 0;

  constructor(
    private readonly clock: Clock,
    private readonly minMs: number,
    private readonly maxMs: number,
    private readonly fire: () => void,
  ) {}

  /** A change arrived: (re)start the quiet period, never past the deadline of the first held change. */
  tick(): void {
    const now = this.clock.now();
    if (this.timer) this.timer.cancel();
    else this.deadline = now + this.maxMs;
    const ms = Math.max(0, Math.min(this.minMs, this.deadline - now));
    this.timer = this.clock.setTimer(ms, () => {
      this.timer = null;
      this.fire();
    });
  }

  cancel(): void {
    this.timer?.cancel();
    this.timer = null;
  }
}
