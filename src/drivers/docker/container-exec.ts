/**
 * A command run inside a container for alloc exec, through the engine's exec API: create the
 * exec, start it on a hijacked connection (stdin in; stdout/stderr out, multiplexed unless it
 * has a tty), resize its terminal, and read its exit code once the stream ends.
 */
import type { Socket } from 'node:net';
import type { ExecStream, ExecStreamEvents, TerminalSize } from '../driver.js';
import type { EngineClient } from './engine-client.js';
import { StreamDemuxer } from './stream-demux.js';

/** Starts `command` in container `containerId`; output and the exit code go to `events`. */
export function startContainerExec(engine: EngineClient, containerId: string, command: string[], tty: boolean, events: ExecStreamEvents): ExecStream {
  let socket: Socket | null = null;
  let execId: string | null = null;
  let exited = false;
  let killed = false;
  const queued: Buffer[] = [];
  let stdinClosed = false;
  let size: TerminalSize | null = null;

  const exit = (code: number) => {
    if (exited) return;
    exited = true;
    events.onExit(code);
  };
  const fail = (err: unknown) => {
    if (exited) return;
    events.onOutput('stderr', Buffer.from(`failed to exec into the container: ${err instanceof Error ? err.message : String(err)}\n`));
    exit(127);
  };
  const resize = () => {
    if (!execId || !size || !tty || exited) return;
    void engine.json({ method: 'POST', path: `/exec/${execId}/resize`, query: { h: size.height, w: size.width } }).catch(() => undefined);
  };

  void (async () => {
    const created = await engine.json<{ Id: string }>({
      method: 'POST',
      path: `/containers/${containerId}/exec`,
      body: { AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: tty, Cmd: command.length > 0 ? command : ['/bin/sh'] },
    });
    execId = created.Id;
    const s = await engine.hijack({ method: 'POST', path: `/exec/${execId}/start`, body: { Detach: false, Tty: tty } });
    socket = s;
    if (killed) {
      s.destroy();
      return;
    }
    resize();
    const demux = new StreamDemuxer((stream, payload) => events.onOutput(stream, payload));
    s.on('data', (d: Buffer) => (tty ? events.onOutput('stdout', d) : demux.push(d)));
    s.on('error', () => undefined);
    s.on('close', () => {
      void engine
        .json<{ ExitCode: number | null; Running: boolean }>({ method: 'GET', path: `/exec/${execId}/json` })
        .then((info) => exit(info.ExitCode ?? (killed ? 137 : 0)))
        .catch(fail);
    });
    for (const b of queued.splice(0)) s.write(b);
    if (stdinClosed) s.end();
  })().catch(fail);

  return {
    write(data) {
      if (exited || stdinClosed) return;
      if (socket) socket.write(data);
      else queued.push(Buffer.from(data));
    },
    closeStdin() {
      if (exited || stdinClosed) return;
      stdinClosed = true;
      if (tty) {
        // A terminal has no separate stdin to close: send EOF (^D) as a terminal user would.
        stdinClosed = false;
        this.write(Buffer.from('\x04'));
        return;
      }
      socket?.end();
    },
    resize(sz) {
      if (sz.width <= 0 || sz.height <= 0) return;
      size = sz;
      resize();
    },
    kill() {
      if (exited) return;
      killed = true;
      // The engine has no "kill exec": signal the exec's process, then drop the stream.
      if (execId) {
        void engine
          .json<{ Pid: number }>({ method: 'GET', path: `/exec/${execId}/json` })
          .then((info) => {
            if (info.Pid > 0) process.kill(info.Pid, 'SIGKILL');
          })
          .catch(() => undefined)
          .finally(() => socket?.destroy());
      }
    },
  };
}
