/**
 * Refusing task config keys a driver does not know, as Nomad's drivers do (their config spec
 * rejects an unsupported argument): the error names the key and suggests the closest known one,
 * so `comand = "…"` reads as a typo of `command` rather than as a missing command.
 */
import { didYouMean } from '../structs/name-suggestion.js';
import { DriverError, DriverErrorCode } from './driver.js';

/** Throws BadConfig naming the first key of `cfg` (in written order) outside `known`. */
export function refuseUnknownConfigKeys(driver: string, cfg: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(cfg)) {
    if (!known.includes(key)) {
      throw new DriverError(DriverErrorCode.BadConfig, `${driver}: unknown config field ${JSON.stringify(key)}.${didYouMean(key, known)}`.replace(/\.$/, ''), false);
    }
  }
}
