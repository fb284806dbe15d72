/**
 * Starts an exec command in the spawner: on a warm shell of its task when one is ready
 * (warm-shell-pool.ts), else by a fresh spawn. A warm shell can die while it waits (killed from
 * outside, the OOM killer) and still look alive until this process handles its exit; a session
 * that takes such a shell finds its control pipe broken, and then starts the command cold instead
 * of reporting the dead shell's exit as the command's.
 */
import type { ExecSpec } from '../../drivers/driver.js';
import { attachPipeProcess, startPipeProcess, type ExecProcess, type ExecProcessEvents } from './exec-process.js';
import { attachPtyProcess, startPtyProcess, terminalCommand } from './pty-process.js';
import type { WarmShellPool } from './warm-shell-pool.js';
import type { StartedCommand } from './warm-shell.js';

/** Starts `spec` (on a terminal when `tty`) for one session. */
export function startCommand(pool: WarmShellPool, spec: ExecSpec, tty: boolean, events: ExecProcessEvents): ExecProcess {
  const ended: ExecProcessEvents = {
    onOutput: events.onOutput,
    onExit: (code) => {
      events.onExit(code);
      pool.busy();
    },
  };
  if (!tty) {
    const cold = (ev: ExecProcessEvents): ExecProcess => startPipeProcess(spec, ev);
    const started = pool.start(spec, false);
    const io = started?.io;
    return started && io ? onWarmShell(started, (ev) => attachPipeProcess(started.child, io, spec, ev), cold, ended) : cold(ended);
  }
  // A relay takes its ready pipe from a fresh spawn; its sandbox costs far more than a fork.
  if (spec.relayedTerminal) return startPtyProcess(spec, undefined, ended);
  const ttySpec = terminalCommand(spec);
  const cold = (ev: ExecProcessEvents): ExecProcess => startPtyProcess(spec, undefined, ev);
  const started = pool.start(ttySpec, true);
  const master = started?.master;
  return started && master !== undefined ? onWarmShell(started, (ev) => attachPtyProcess({ child: started.child, master }, ttySpec, ev), cold, ended) : cold(ended);
}

/**
 * Binds a command handed to a warm shell; should the shell refuse it (dead before it read its
 * line), whatever the dead shell reports is dropped and the command is started cold. The refusal
 * is known right after the hand-over, before the shell's exit can be handled.
 */
function onWarmShell(started: StartedCommand, attach: (ev: ExecProcessEvents) => ExecProcess, cold: (ev: ExecProcessEvents) => ExecProcess, events: ExecProcessEvents): ExecProcess {
  let refused = false;
  let killed = false;
  const fromShell: ExecProcessEvents = {
    onOutput: (stream, data) => {
      if (!refused) events.onOutput(stream, data);
    },
    onExit: (code) => {
      if (!refused) events.onExit(code);
    },
  };
  let current = attach(fromShell);
  void started.refused.then(() => {
    // A session already killed just ends, with the dead shell's exit.
    if (killed) return;
    refused = true;
    current = cold(events);
  });
  return {
    write: (data) => current.write(data),
    closeStdin: () => current.closeStdin(),
    resize: (size) => current.resize(size),
    kill: () => {
      killed = true;
      current.kill();
    },
  };
}
