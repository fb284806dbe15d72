/**
 * A shared, briefly cached view of /proc grouped by process group, so that resource usage of
 * many tasks costs one /proc scan per refresh instead of one scan per task: with 1,000 tasks
 * polled every second, scanning /proc per request is a million file reads per second.
 */
import { readProcStat, readRssBytes, type GroupUsage, type ProcStat } from './proc-stat.js';
import { readdirSync } from 'node:fs';

/** Process-group usage answered from a /proc scan at most `maxAgeMs` old. */
export class ProcGroupTable {
  private groups = new Map<number, ProcStat[]>();
  private scannedAt = -Infinity;

  constructor(
    /** Milliseconds clock (injected so the cache age is testable). */
    private readonly now: () => number,
    private readonly maxAgeMs = 500,
  ) {}

  /** RSS, CPU ticks and pids of the live members of process group `pgid`. */
  usage(pgid: number): GroupUsage {
    if (this.now() - this.scannedAt > this.maxAgeMs) this.scan();
    // A group not in the snapshot may have been started after it: look it up directly.
    const members = this.groups.get(pgid) ?? processGroupMembersFresh(pgid);
    let rssBytes = 0;
    let cpuTicks = 0;
    const pids: number[] = [];
    for (const m of members) {
      // CPU and RSS are read fresh for the (few) members; only membership comes from the scan.
      const st = readProcStat(m.pid);
      if (!st || st.state === 'Z' || st.pgrp !== pgid) continue;
      rssBytes += readRssBytes(m.pid);
      cpuTicks += st.cpuTicks;
      pids.push(m.pid);
    }
    return { rssBytes, cpuTicks, pids };
  }

  private scan(): void {
    const groups = new Map<number, ProcStat[]>();
    let entries: string[] = [];
    try {
      entries = readdirSync('/proc');
    } catch {
      // no /proc: every lookup answers empty
    }
    for (const name of entries) {
      if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
      const st = readProcStat(Number(name));
      if (!st || st.state === 'Z') continue;
      const list = groups.get(st.pgrp);
      if (list) list.push(st);
      else groups.set(st.pgrp, [st]);
    }
    this.groups = groups;
    this.scannedAt = this.now();
  }
}

/** Members of a group not in the cached scan: its leader alone (pgid == leader pid) if alive. */
function processGroupMembersFresh(pgid: number): ProcStat[] {
  const leader = readProcStat(pgid);
  return leader && leader.pgrp === pgid ? [leader] : [];
}
