/** Signal names as Nomad's `kill_signal` and `alloc signal` take them, mapped to numbers. */
import { constants as osConstants } from 'node:os';
import { SupervisorError, SupervisorErrorCode } from './protocol.js';

/** Maps a signal name ("SIGTERM", "TERM", "15") to its number; throws SupervisorError on unknown names. */
export function signalNumber(signal: string): number {
  const s = signal.trim().toUpperCase();
  if (/^\d+$/.test(s)) return Number(s);
  const name = (s.startsWith('SIG') ? s : `SIG${s}`) as keyof typeof osConstants.signals;
  const n = osConstants.signals[name];
  if (typeof n !== 'number') throw new SupervisorError(SupervisorErrorCode.BadRequest, `unknown signal "${signal}"`);
  return n;
}

/** The number of a signal Node reports by name; 0 if unknown. */
export function signalNumberOf(name: NodeJS.Signals): number {
  return osConstants.signals[name] ?? 0;
}
