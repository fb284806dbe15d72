/**
 * Descriptors this process holds that are not close-on-exec (terminal ends from pty-native.ts;
 * Node offers no fcntl to mark them). Every child this process spawns gets /dev/null dup'ed
 * over each of them (`stdio` entries past its own), so none leaks into a command.
 */
import { openSync } from 'node:fs';
import type { StdioOptions } from 'node:child_process';

const held = new Set<number>();
let devNull: number | undefined;

/**
 * Records `fd` as held. Release it only once it is closed: a child spawned in between would
 * otherwise inherit it.
 */
export function hold(fd: number): void {
  held.add(fd);
}

export function release(fd: number): void {
  held.delete(fd);
}

/** True while any descriptor is held: a child forked without stdioWithout would inherit it. */
export function holdsAny(): boolean {
  return held.size > 0;
}

/**
 * `stdio` (a child's first descriptors) extended so that each held descriptor's number is
 * covered by /dev/null in the child. The child's own entries come first, so a held descriptor
 * may still be one of its stdio sources (a terminal's slave end).
 */
export function stdioWithout(stdio: Exclude<StdioOptions, string>): Exclude<StdioOptions, string> {
  if (held.size === 0) return stdio;
  devNull ??= openSync('/dev/null', 'r+');
  const out = [...stdio];
  for (const fd of held) {
    if (fd < stdio.length) throw new Error(`held descriptor ${fd} collides with a child's stdio`);
    while (out.length <= fd) out.push('ignore');
    out[fd] = devNull;
  }
  return out;
}
