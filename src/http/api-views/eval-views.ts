/**
 * The evaluation answers of the API built in one place, for the routes and the event stream
 * alike: an evaluation as Nomad writes it, whose WaitUntil is a Go time.Time value (the zero
 * time when the evaluation waits for nothing; the state keeps null).
 */
import type { Evaluation } from '../../structs/eval.js';
import { goTime } from '../../structs/go-time.js';

/** An evaluation as the API answers it. */
export function evalView(ev: Evaluation): Evaluation {
  return { ...ev, WaitUntil: goTime(ev.WaitUntil) };
}
