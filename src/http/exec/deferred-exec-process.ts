/**
 * An exec process that is started a little later (its stdio pipes are on their way): what the
 * session asks of it meanwhile is done, in order, once it has started.
 */
// The driver's ExecStream is what exec-process.ts calls an ExecProcess (taken from its source: that module imports this one).
import type { ExecStream as ExecProcess } from '../../drivers/driver.js';

/** A process standing for the one `started` resolves to. */
export function deferExecProcess(started: Promise<ExecProcess>): ExecProcess {
  let proc: ExecProcess | undefined;
  const pending: Array<(p: ExecProcess) => void> = [];
  void started.then((p) => {
    proc = p;
    for (const op of pending.splice(0)) op(p);
  });
  const call = (op: (p: ExecProcess) => void): void => {
    if (proc) op(proc);
    else pending.push(op);
  };
  return {
    write: (data) => call((p) => p.write(data)),
    closeStdin: () => call((p) => p.closeStdin()),
    resize: (size) => call((p) => p.resize(size)),
    kill: () => call((p) => p.kill()),
  };
}
