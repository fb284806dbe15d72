/**
 * Batched iptables changes: `iptables-restore --noflush` applies a whole ruleset text in one
 * process and one kernel transaction (all of it or none of it), where `iptables` costs a
 * process per rule. `iptables-save` reads a table the same way. Both are the binaries the
 * `iptables` on PATH belongs to (the nft or legacy backend the CNI plugins use too).
 */
import { execFile } from 'node:child_process';
import { CaravanError } from '../../structs/caravan-error.js';

/** An iptables-restore or iptables-save run that failed, with what the tool printed. */
export class IptablesError extends CaravanError<'CLIENT_IPTABLES'> {
  constructor(
    readonly tool: string,
    readonly detail: string,
  ) {
    super('CLIENT_IPTABLES', { tool, reason: detail });
    this.name = 'IptablesError';
  }
}

/** Something that applies a ruleset text as iptablesRestore does (a standby process, in the client). */
export type RestoreRuleset = (text: string) => Promise<void>;

/** The tools answer in milliseconds; a hung one must not hang a set-up forever. */
const TIMEOUT_MS = 30_000;

/**
 * Applies `text` (iptables-save format: `*table`, chain declarations, `-A`/`-I`/`-D`/`-F`/`-X`
 * lines, `COMMIT`) without flushing what it does not name. A declared user chain (`:NAME - [0:0]`)
 * is created, or flushed when it exists. Atomic per table: a failing line changes nothing.
 */
export function iptablesRestore(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile('iptables-restore', ['-w', '--noflush'], { timeout: TIMEOUT_MS }, (err, _out, stderr) => {
      if (err) reject(new IptablesError('iptables-restore', String(stderr).trim() || err.message));
      else resolve();
    });
    child.stdin?.end(text);
  });
}

/** The rules of one table, as `iptables-save -t <table>` prints them. */
export function iptablesSave(table: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('iptables-save', ['-t', table], { timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (err, out, stderr) => {
      if (err) reject(new IptablesError('iptables-save', String(stderr).trim() || err.message));
      else resolve(String(out));
    });
  });
}
