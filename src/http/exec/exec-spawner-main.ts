/**
 * Entry point of the exec spawner: a small process the agent forks once, which starts exec
 * commands (pipes or a pseudo-terminal) on the agent's behalf and relays their I/O over IPC.
 * Forking a command from the agent costs ~5–12 ms (fork copies the page tables of a large
 * process); from this one, under 1 ms. When the agent goes away, every command it started here
 * is killed and the spawner exits.
 */
import type { ExecProcess } from './exec-process.js';
import type { SpawnerEvent, SpawnerRequest } from './exec-spawner-protocol.js';
import { sharedPipeStock } from './pipe-stock.js';
import { startCommand } from './start-command.js';
import { WarmShellPool } from './warm-shell-pool.js';

const procs = new Map<number, ExecProcess>();
const pipes = sharedPipeStock();
const warm = new WarmShellPool(pipes);
// The first session's stdio pipes are made while its request is on its way.
void pipes.ready();

const send = (ev: SpawnerEvent): void => {
  if (process.connected) process.send!(ev);
};

process.on('message', (msg: SpawnerRequest) => {
  if (msg.op === 'start') {
    const spec = { file: msg.file, args: msg.args, cwd: msg.cwd, env: msg.env, ...(msg.killSignal ? { killSignal: msg.killSignal } : {}), ...(msg.stdioOwner ? { stdioOwner: msg.stdioOwner } : {}), ...(msg.relayedTerminal ? { relayedTerminal: msg.relayedTerminal } : {}) };
    const events = {
      onOutput: (stream: 'stdout' | 'stderr', data: Buffer) => send({ op: 'output', id: msg.id, stream, data }),
      onExit: (code: number) => {
        procs.delete(msg.id);
        send({ op: 'exit', id: msg.id, code });
      },
    };
    procs.set(msg.id, startCommand(warm, spec, msg.tty, events));
    return;
  }
  const p = procs.get(msg.id);
  if (!p) return;
  if (msg.op === 'stdin') p.write(Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength));
  else if (msg.op === 'closeStdin') p.closeStdin();
  else if (msg.op === 'resize') p.resize(msg.size);
  else if (msg.op === 'kill') p.kill();
});

process.on('disconnect', () => {
  warm.close();
  pipes.close();
  for (const p of procs.values()) p.kill();
  process.exit(0);
});
