/**
 * The agent's own log, as Nomad writes it: text lines
 * (`2026-11-27T07:38:02.123Z [INFO]  client: node registered: node=…`) on stderr unless
 * `log_json` (then one JSON object a line, pino's), at `log_level`; the same lines to `log_file`
 * when set (rotated: log-file.ts). The logger is built on a pino multistream so that
 * /v1/agent/monitor can follow it (http/log-monitor.ts): a monitor gets the JSON lines and
 * formats them as its caller asks, whatever the agent's own format.
 */
import { destination, multistream, pino, type Level, type Logger } from 'pino';
import { formatLogLine } from '../http/log-monitor.js';
import { DEFAULT_LOG_ROTATE_DURATION_MS, LogFile } from './log-file.js';

/** The logging settings of the agent configuration (Nomad's names in comments). */
export interface AgentLogConfig {
  /** `log_level`: trace, debug, info, warn or error. */
  logLevel: string;
  /** `log_json`: JSON lines instead of text. */
  logJson: boolean;
  /** `log_file`: also write the lines to this file (a path ending in "/" is a directory). */
  logFile?: string;
  /** `log_rotate_bytes`: 0 for no size limit. */
  logRotateBytes: number;
  /** `log_rotate_duration` in ms (default 24h). */
  logRotateDurationMs: number;
  /** `log_rotate_max_files`: 0 keeps every archive. */
  logRotateMaxFiles: number;
}

/** The logging defaults (Nomad's). */
export function defaultLogConfig(): AgentLogConfig {
  return { logLevel: 'info', logJson: false, logRotateBytes: 0, logRotateDurationMs: DEFAULT_LOG_ROTATE_DURATION_MS, logRotateMaxFiles: 0 };
}

/** The agent's logger and what it writes to. */
export interface AgentLog {
  logger: Logger;
  /** The active log file's path, when `log_file` is set (monitor export reads it). */
  filePath: string | undefined;
  /** Flushes stderr and closes the file; call once, at exit. */
  close(): void;
}

/**
 * Builds the agent's logger; `base` fields go on every line. Throws LogFileError when the log
 * file cannot be opened (a configuration error naming log_file).
 */
export function createAgentLogger(config: AgentLogConfig, base: Record<string, unknown>, stderrFd = 2): AgentLog {
  const file = config.logFile !== undefined && config.logFile !== ''
    ? new LogFile({ path: config.logFile, rotateBytes: config.logRotateBytes, rotateDurationMs: config.logRotateDurationMs, rotateMaxFiles: config.logRotateMaxFiles })
    : undefined;
  const stderr = destination({ fd: stderrFd, sync: false });
  const sink = {
    write(line: string): void {
      const text = config.logJson ? line : formatLogLine(line);
      stderr.write(text);
      file?.write(text);
    },
  };
  // As Nomad's, `monitor -log-level debug` sees debug lines of an agent that writes info: the
  // logger produces debug and up, and only its own stream (stderr, the file) keeps `log_level`.
  const configured = config.logLevel as Level;
  const produced: Level = configured === 'trace' ? 'trace' : 'debug';
  const logger = pino({ level: produced, base }, multistream([{ level: configured, stream: sink }]));
  return {
    logger,
    filePath: file?.path,
    close() {
      stderr.flushSync();
      file?.close();
    },
  };
}
