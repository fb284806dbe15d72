/**
 * Reading Linux /proc for task processes: start time (to tell a live task from a reused
 * PID), liveness, process-group members, RSS and CPU ticks. Both the supervisor and the
 * driver (in degraded mode, with no supervisor) use it.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** The fields of /proc/<pid>/stat that we use. */
export interface ProcStat {
  pid: number;
  /** One-letter state: R, S, D, Z, T, … */
  state: string;
  ppid: number;
  pgrp: number;
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
  /** Start time in clock ticks after boot; with the pid it names one process uniquely. */
  startTime: number;
  rssPages: number;
}

/** Reads /proc/<pid>/stat; null when the process does not exist (or /proc is absent). */
export function readProcStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return parseProcStat(text);
}

/** Parses the text of /proc/<pid>/stat; the command name may contain spaces and parens. */
export function parseProcStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const pid = Number(text.slice(0, text.indexOf(' ')));
  // Fields after the command name start at field 3 (state).
  const f = text.slice(close + 2).trim().split(/\s+/);
  const num = (i: number) => Number(f[i - 3]);
  return {
    pid,
    state: f[0] ?? '?',
    ppid: num(4),
    pgrp: num(5),
    cpuTicks: num(14) + num(15),
    startTime: num(22),
    rssPages: num(24),
  };
}

/**
 * Whether the process `pid` that started at `startTime` is still alive (not a zombie).
 * A different start time means the PID was reused by an unrelated process. A start time of 0
 * (never learned) cannot prove identity, so it answers false; omit it to ask about liveness only.
 */
export function processAlive(pid: number, startTime?: number): boolean {
  const st = readProcStat(pid);
  if (!st || st.state === 'Z' || st.state === 'X') return false;
  if (startTime === undefined) return true;
  return startTime > 0 && st.startTime === startTime;
}

/**
 * Whether `pid` is still the live process that started at `startTime` AND leads its own
 * process group, as every supervised task does (it is spawned with setsid). Only then may
 * its group be signalled as `-pid`; pid 1 never qualifies, since kill(-1) means "everyone".
 */
export function isLiveGroupLeader(pid: number, startTime: number): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  const st = readProcStat(pid);
  if (!st || st.state === 'Z' || st.state === 'X') return false;
  return startTime > 0 && st.startTime === startTime && st.pgrp === pid;
}

/** The pids of every live process whose process group is pgid. */
export function processGroupMembers(pgid: number): ProcStat[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcStat[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const st = readProcStat(Number(name));
    if (st && st.pgrp === pgid && st.state !== 'Z') out.push(st);
  }
  return out;
}

/** VmRSS of a process in bytes from /proc/<pid>/status; 0 if unknown. */
export function readRssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Pss of a process in bytes from /proc/<pid>/smaps_rollup; null when unavailable. */
export function readPssBytes(pid: number): number | null {
  try {
    const m = /^Pss:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Aggregate usage of a process group: RSS summed, CPU ticks summed, member pids. */
export interface GroupUsage {
  rssBytes: number;
  cpuTicks: number;
  pids: number[];
}

/** Sums RSS and CPU ticks over every member of the process group pgid. */
export function processGroupUsage(pgid: number): GroupUsage {
  const members = processGroupMembers(pgid);
  let rssBytes = 0;
  let cpuTicks = 0;
  for (const m of members) {
    rssBytes += readRssBytes(m.pid);
    cpuTicks += m.cpuTicks;
  }
  return { rssBytes, cpuTicks, pids: members.map((m) => m.pid) };
}
