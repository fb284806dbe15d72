/**
 * Messages between the agent and its exec spawner (exec-spawner.ts, exec-spawner-main.ts), over
 * the child's IPC channel with structured-clone serialization (Buffers travel as bytes).
 */
import type { ExecSpec } from '../../drivers/driver.js';
import type { TerminalSize } from './exec-frames.js';

/** Agent → spawner. */
export type SpawnerRequest =
  | { op: 'start'; id: number; file: string; args: string[]; cwd: string; env: Record<string, string>; tty: boolean; killSignal?: NodeJS.Signals; stdioOwner?: { uid: number; gid: number }; relayedTerminal?: ExecSpec['relayedTerminal'] }
  | { op: 'stdin'; id: number; data: Uint8Array }
  | { op: 'closeStdin'; id: number }
  | { op: 'resize'; id: number; size: TerminalSize }
  | { op: 'kill'; id: number };

/** Spawner → agent. */
export type SpawnerEvent =
  | { op: 'output'; id: number; stream: 'stdout' | 'stderr'; data: Uint8Array }
  | { op: 'exit'; id: number; code: number };
