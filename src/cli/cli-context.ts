/**
 * What a command module gets besides commander: its output streams, environment and the exit
 * code it sets. Commands write through the context (never console.*) so tests can run `main`
 * in-process and capture what it printed.
 */

/** Exit codes of the caravan command, as Nomad's CLI uses them. */
export const ExitCode = {
  Ok: 0,
  Error: 1,
  Usage: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A writable text sink (process.stdout, or a buffer in tests). */
export interface TextSink {
  write(text: string): unknown;
}

/** The I/O a command runs against; created once per `main` call. */
export interface CliContext {
  stdout: TextSink;
  stderr: TextSink;
  env: NodeJS.ProcessEnv;
  /** Working directory relative paths are resolved against. */
  cwd: string;
  /** Set by a command's action to report its outcome; `main` returns it. */
  exitCode: number;
}

/**
 * Thrown by a command action for a failure of the run rather than of its command line (a file
 * that cannot be read or parsed): exit code 1, the message printed as it is.
 */
export class CliRunError extends Error {
  readonly code = 'CLI_RUN';
  constructor(message: string) {
    super(message);
    this.name = 'CliRunError';
  }
}

/** Thrown by a command action for a usage problem (bad flags, missing arguments): exit code 2. */
export class CliUsageError extends Error {
  readonly code = 'CLI_USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}
