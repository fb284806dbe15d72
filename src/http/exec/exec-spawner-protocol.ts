/**
 * Messages between the agent and its exec spawner (exec-spawner.ts, exec-spawner-main.ts), over
 * the child's IPC channel with structured-clone serialization (Buffers travel as bytes).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { TerminalSize } from './exec-frames.js';

/** The command of a session: what ExecSpec carries for a host process. */
interface SpawnerCommand {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  tty: boolean;
  /** The signal that ends the command when its session ends (ExecSpec.killSignal). */
  killSignal?: NodeJS.Signals;
}

/** Agent → spawner. */
export type SpawnerRequest =
  | ({ op: 'start'; id: number } & SpawnerCommand)
  /**
   * Sent with the client's socket of a websocket upgrade the agent has routed but not answered:
   * the spawner completes the handshake from `method`, `headers` and `head` (bytes read past the
   * request) and runs the whole session itself.
   */
  | ({ op: 'session'; id: number; method: string; headers: IncomingHttpHeaders; head: Uint8Array } & SpawnerCommand)
  | { op: 'stdin'; id: number; data: Uint8Array }
  | { op: 'closeStdin'; id: number }
  | { op: 'resize'; id: number; size: TerminalSize }
  | { op: 'kill'; id: number };

/** Spawner → agent. `ended` reports that the socket of a `session` closed. */
export type SpawnerEvent =
  | { op: 'output'; id: number; stream: 'stdout' | 'stderr'; data: Uint8Array }
  | { op: 'exit'; id: number; code: number }
  | { op: 'ended'; id: number };
