/**
 * Entry point of the supervisor daemon: `node supervisor-main.js <dataDir> [idleMs]`.
 * Takes the pid-file lock (so two racing starters yield one daemon), listens on the
 * socket and serves until idle. Started detached by the raw_exec driver.
 */
import { appendFileSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { Supervisor } from './supervisor.js';
import { supervisorPaths, type SupervisorPaths } from './protocol.js';

const DEFAULT_IDLE_MS = 60_000;

function isLiveSupervisor(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('supervisor-main');
  } catch {
    return false;
  }
}

/** Takes `supervisor.pid` exclusively; false when another live supervisor holds it. */
function takePidLock(paths: SupervisorPaths): boolean {
  for (let attempt = 0; attempt < 5; attempt++) {
    // The pid file appears with its pid already in it (written aside, then hard-linked into
    // place, which fails if it exists): a racing starter must never read it empty, take the
    // holder for dead and remove a live lock.
    const aside = `${paths.pidFile}.${process.pid}`;
    try {
      writeFileSync(aside, String(process.pid));
      linkSync(aside, paths.pidFile);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSafe(aside);
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(paths.pidFile, 'utf8').trim());
    } catch {
      continue; // Removed meanwhile: retry.
    }
    if (isLiveSupervisor(holder)) return false;
    try {
      unlinkSync(paths.pidFile); // Stale: its owner is dead.
    } catch {
      // Someone else removed it first.
    }
  }
  return false;
}

function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) {
    process.stderr.write('usage: supervisor-main <dataDir> [idleMs]\n');
    process.exit(2);
  }
  const idleMs = Number(process.argv[3] ?? DEFAULT_IDLE_MS) || DEFAULT_IDLE_MS;
  const paths = supervisorPaths(dataDir);
  mkdirSync(paths.dir, { recursive: true });
  const log = (msg: string) => {
    try {
      appendFileSync(paths.logFile, `${new Date().toISOString()} [${process.pid}] ${msg}\n`);
    } catch {
      // Logging must never take the supervisor down.
    }
  };
  // Being the parent of every task, the supervisor must not die of a stray error.
  process.on('uncaughtException', (err) => log(`uncaught: ${err.stack ?? err.message}`));
  process.on('unhandledRejection', (err) => log(`unhandled rejection: ${String(err)}`));
  process.on('SIGHUP', () => {});
  process.on('SIGPIPE', () => {});

  if (!takePidLock(paths)) {
    log('another supervisor holds the lock; exiting');
    process.exit(0);
  }
  if (await socketAnswers(paths.socket)) {
    // A supervisor that lost its pid file still serves: leave it in charge.
    log('socket already served; exiting');
    unlinkSafe(paths.pidFile);
    process.exit(0);
  }
  unlinkSafe(paths.socket);
  const sup = new Supervisor({ dataDir, idleMs, log });
  await sup.listen();
  log(`listening on ${paths.socket}`);

  const shutdown = async (why: string) => {
    log(`shutting down: ${why}`);
    await sup.close();
    try {
      if (Number(readFileSync(paths.pidFile, 'utf8').trim()) === process.pid) {
        unlinkSafe(paths.socket);
        unlinkSafe(paths.pidFile);
      }
    } catch {
      // Files already gone.
    }
    process.exit(0);
  };
  sup.onIdleExit = () => void shutdown('idle');
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

function unlinkSafe(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    // Not there.
  }
}

void main();
